#include "radiance/ipc/shm_ring.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "radiance/util/error.h"

namespace radiance::ipc {

namespace {

constexpr uint32_t kMagic = 0x52414452;  // "RADR"
constexpr uint32_t kVersion = 1;

long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const struct timespec* ts) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}

}  // namespace

// One direction: the producer advances head, the consumer tail; `bell` is the futex word and
// `sleeping` says the consumer is (about to be) asleep on it.
struct alignas(64) ShmRing::Lane {
    std::atomic<uint64_t> head;
    char pad0[56];
    std::atomic<uint64_t> tail;
    char pad1[56];
    std::atomic<uint32_t> bell;
    std::atomic<uint32_t> sleeping;
    char pad2[56];
};

struct ShmRing::Header {
    uint32_t magic;
    uint32_t version;
    uint32_t slots;
    uint32_t reserved;
    uint64_t req_slot_bytes;
    uint64_t res_slot_bytes;
    char pad[32];
    Lane req;
    Lane res;
};

static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "the ring's atomics must be lock-free to work across processes");

std::unique_ptr<ShmRing> ShmRing::create(const std::string& name, uint32_t slots, uint64_t req_bytes, uint64_t res_bytes) {
    std::unique_ptr<ShmRing> r(new ShmRing());
    r->name_ = name;
    r->owner_ = true;
    req_bytes = (req_bytes + 8 + 63) / 64 * 64;
    res_bytes = (res_bytes + 8 + 63) / 64 * 64;
    r->size_ = sizeof(Header) + slots * (req_bytes + res_bytes);
    shm_unlink(name.c_str());
    int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) throw Error("shm_open " + name + ": " + std::strerror(errno));
    if (ftruncate(fd, static_cast<off_t>(r->size_)) != 0) {
        ::close(fd);
        shm_unlink(name.c_str());
        throw Error("sizing shared memory " + name + " to " + std::to_string(r->size_) + " bytes: " + std::strerror(errno));
    }
    void* m = mmap(nullptr, r->size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw Error("mmap " + name + ": " + std::strerror(errno));
    r->map_ = m;
    r->hdr_ = new (m) Header();
    r->hdr_->magic = kMagic;
    r->hdr_->version = kVersion;
    r->hdr_->slots = slots;
    r->hdr_->req_slot_bytes = req_bytes;
    r->hdr_->res_slot_bytes = res_bytes;
    r->req_slots_ = static_cast<uint8_t*>(m) + sizeof(Header);
    r->res_slots_ = r->req_slots_ + slots * req_bytes;
    return r;
}

std::unique_ptr<ShmRing> ShmRing::open(const std::string& name) {
    int fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) throw Error("shm_open " + name + ": " + std::strerror(errno) + " (is the worker on the front end's host?)");
    struct stat st {};
    fstat(fd, &st);
    std::unique_ptr<ShmRing> r(new ShmRing());
    r->name_ = name;
    r->size_ = static_cast<uint64_t>(st.st_size);
    if (r->size_ < sizeof(Header)) {
        ::close(fd);
        throw Error("shared memory " + name + " is too small to be a step ring");
    }
    void* m = mmap(nullptr, r->size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw Error("mmap " + name + ": " + std::strerror(errno));
    r->map_ = m;
    r->hdr_ = static_cast<Header*>(m);
    const Header& h = *r->hdr_;
    if (h.magic != kMagic || h.version != kVersion || sizeof(Header) + h.slots * (h.req_slot_bytes + h.res_slot_bytes) != r->size_)
        throw Error("shared memory " + name + " is not a step ring of this version");
    r->req_slots_ = static_cast<uint8_t*>(m) + sizeof(Header);
    r->res_slots_ = r->req_slots_ + h.slots * h.req_slot_bytes;
    return r;
}

ShmRing::~ShmRing() {
    if (map_) munmap(map_, size_);
    if (owner_) shm_unlink(name_.c_str());
}

void ShmRing::unlink() { shm_unlink(name_.c_str()); }

uint64_t ShmRing::request_capacity() const { return hdr_->req_slot_bytes - 8; }
uint64_t ShmRing::result_capacity() const { return hdr_->res_slot_bytes - 8; }

bool ShmRing::push(Lane& lane, uint8_t* slots, uint64_t slot_bytes, std::string_view msg) {
    if (msg.size() + 8 > slot_bytes) return false;
    const uint64_t head = lane.head.load(std::memory_order_relaxed);
    if (head - lane.tail.load(std::memory_order_acquire) >= hdr_->slots) return false;
    uint8_t* slot = slots + (head % hdr_->slots) * slot_bytes;
    const uint64_t n = msg.size();
    std::memcpy(slot, &n, 8);
    std::memcpy(slot + 8, msg.data(), n);
    lane.head.store(head + 1, std::memory_order_release);
    // Wake the consumer only if it announced it sleeps (a seq_cst pair with its check below).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (lane.sleeping.load(std::memory_order_relaxed)) {
        lane.bell.fetch_add(1, std::memory_order_release);
        futex(&lane.bell, FUTEX_WAKE, 1, nullptr);
    }
    return true;
}

bool ShmRing::pop(Lane& lane, const uint8_t* slots, uint64_t slot_bytes, std::string* out, int64_t timeout_us) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
    const uint64_t tail = lane.tail.load(std::memory_order_relaxed);
    int spins = 0;
    while (lane.head.load(std::memory_order_acquire) == tail) {
        // A short spin catches the common case of an answer a few microseconds away without a
        // syscall; past it the consumer sleeps on the bell.
        if (++spins < 200) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        const uint32_t bell = lane.bell.load(std::memory_order_acquire);
        lane.sleeping.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (lane.head.load(std::memory_order_acquire) != tail) {
            lane.sleeping.store(0, std::memory_order_relaxed);
            break;
        }
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            lane.sleeping.store(0, std::memory_order_relaxed);
            return false;
        }
        auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
        struct timespec ts {
            static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)
        };
        futex(&lane.bell, FUTEX_WAIT, bell, &ts);
        lane.sleeping.store(0, std::memory_order_relaxed);
    }
    const uint8_t* slot = slots + (tail % hdr_->slots) * slot_bytes;
    uint64_t n;
    std::memcpy(&n, slot, 8);
    if (n > slot_bytes - 8) n = slot_bytes - 8;  // a corrupted length cannot read past the slot
    out->assign(reinterpret_cast<const char*>(slot + 8), n);
    lane.tail.store(tail + 1, std::memory_order_release);
    return true;
}

bool ShmRing::push_request(std::string_view msg) { return push(hdr_->req, req_slots_, hdr_->req_slot_bytes, msg); }
bool ShmRing::pop_result(std::string* out, int64_t timeout_us) { return pop(hdr_->res, res_slots_, hdr_->res_slot_bytes, out, timeout_us); }
bool ShmRing::pop_request(std::string* out, int64_t timeout_us) {
    return pop(hdr_->req, req_slots_, hdr_->req_slot_bytes, out, timeout_us);
}
bool ShmRing::push_result(std::string_view msg) { return push(hdr_->res, res_slots_, hdr_->res_slot_bytes, msg); }

}  // namespace radiance::ipc
