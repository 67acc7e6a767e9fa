#include "radiance/ipc/host_comm.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "radiance/util/error.h"

namespace radiance::ipc {

namespace {
constexpr uint32_t kMagic = 0x4d4d4f43;  // "COMM"
long futex(std::atomic<uint32_t>* a, int op, uint32_t v, const timespec* ts) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(a), op, v, ts, nullptr, 0);
}
}  // namespace

struct HostComm::Header {
    uint32_t magic;
    uint32_t world;
    uint64_t slot_bytes;
    alignas(64) std::atomic<uint32_t> arrived;
    alignas(64) std::atomic<uint32_t> phase;  // the futex word: bumps when everyone arrived
    alignas(64) std::atomic<uint32_t> aborted;
};

static uint64_t header_bytes() { return (sizeof(HostComm::Header) + 4095) / 4096 * 4096; }

std::unique_ptr<HostComm> HostComm::create(const std::string& name, int world, uint64_t slot_bytes) {
    std::unique_ptr<HostComm> c(new HostComm());
    c->name_ = name;
    c->owner_ = true;
    slot_bytes = (slot_bytes + 4095) / 4096 * 4096;
    c->size_ = header_bytes() + static_cast<uint64_t>(world) * slot_bytes;
    shm_unlink(name.c_str());
    int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) throw Error("shm_open " + name + ": " + std::strerror(errno));
    if (ftruncate(fd, static_cast<off_t>(c->size_)) != 0) {
        ::close(fd);
        throw Error("sizing " + name + ": " + std::strerror(errno));
    }
    void* m = mmap(nullptr, c->size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw Error("mmap " + name + ": " + std::strerror(errno));
    c->map_ = m;
    c->hdr_ = new (m) Header();
    c->hdr_->magic = kMagic;
    c->hdr_->world = static_cast<uint32_t>(world);
    c->hdr_->slot_bytes = slot_bytes;
    return c;
}

std::unique_ptr<HostComm> HostComm::attach(const std::string& name, int rank) {
    int fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) throw Error("shm_open " + name + ": " + std::strerror(errno));
    struct stat st {};
    fstat(fd, &st);
    std::unique_ptr<HostComm> c(new HostComm());
    c->name_ = name;
    c->rank_ = rank;
    c->size_ = static_cast<uint64_t>(st.st_size);
    if (c->size_ < header_bytes()) {
        ::close(fd);
        throw Error(name + " is too small to be a communicator");
    }
    void* m = mmap(nullptr, c->size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw Error("mmap " + name + ": " + std::strerror(errno));
    c->map_ = m;
    c->hdr_ = static_cast<Header*>(m);
    if (c->hdr_->magic != kMagic || rank < 0 || rank >= static_cast<int>(c->hdr_->world) ||
        header_bytes() + c->hdr_->world * c->hdr_->slot_bytes != c->size_)
        throw Error(name + " is not a communicator for rank " + std::to_string(rank));
    return c;
}

HostComm::~HostComm() {
    if (map_) munmap(map_, size_);
    if (owner_) shm_unlink(name_.c_str());
}

int HostComm::world() const { return static_cast<int>(hdr_->world); }

void HostComm::fill(RadComm* c) {
    c->struct_size = sizeof *c;
    c->rank = rank_;
    c->world = static_cast<int32_t>(hdr_->world);
    c->staging = static_cast<uint8_t*>(map_) + header_bytes();
    c->slot_bytes = hdr_->slot_bytes;
    c->barrier = &HostComm::barrier;
    c->aborted = &HostComm::aborted;
    c->engine = this;
}

int HostComm::aborted(RadComm* rc) { return static_cast<HostComm*>(rc->engine)->hdr_->aborted.load(std::memory_order_acquire) ? 1 : 0; }

void HostComm::abort() {
    hdr_->aborted.store(1, std::memory_order_release);
    hdr_->phase.fetch_add(1, std::memory_order_acq_rel);
    futex(&hdr_->phase, FUTEX_WAKE, INT_MAX, nullptr);
}

int HostComm::barrier(RadComm* rc) {
    Header* h = static_cast<HostComm*>(rc->engine)->hdr_;
    if (h->aborted.load(std::memory_order_acquire)) return RAD_E_INTERNAL;
    const uint32_t ph = h->phase.load(std::memory_order_acquire);
    if (h->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == h->world) {
        h->arrived.store(0, std::memory_order_relaxed);
        h->phase.fetch_add(1, std::memory_order_acq_rel);
        futex(&h->phase, FUTEX_WAKE, INT_MAX, nullptr);
    } else {
        int spins = 0;
        while (h->phase.load(std::memory_order_acquire) == ph) {
            if (++spins < 2000) continue;  // peers usually arrive within microseconds
            timespec ts{0, 50 * 1000 * 1000};
            futex(&h->phase, FUTEX_WAIT, ph, &ts);
            if (h->aborted.load(std::memory_order_acquire)) return RAD_E_INTERNAL;
        }
    }
    return h->aborted.load(std::memory_order_acquire) ? RAD_E_INTERNAL : RAD_OK;
}

}  // namespace radiance::ipc
