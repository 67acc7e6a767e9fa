// host_comm.h: the host-staging communicator of one tensor-parallel group on one host.
//
// A shared-memory segment with one staging slot per rank and a barrier. The front end creates a
// new segment (a new generation) each time the group becomes whole, and aborts the old one when a
// rank goes down: every rank blocked in its barrier then returns an error at once instead of
// waiting for a peer that will never arrive. Workers attach by name when a step names a new
// generation, so a restarted rank and its surviving peers meet in a fresh communicator.
#pragma once
#include <radiance/rad_plugin.h>

#include <cstdint>
#include <memory>
#include <string>

namespace radiance::ipc {

class HostComm {
public:
    static std::unique_ptr<HostComm> create(const std::string& name, int world, uint64_t slot_bytes);
    static std::unique_ptr<HostComm> attach(const std::string& name, int rank);
    ~HostComm();
    HostComm(const HostComm&) = delete;
    HostComm& operator=(const HostComm&) = delete;

    // Fills a RadComm for the engine's collective rows (rank, world, staging, barrier, aborted).
    void fill(RadComm* c);
    // Wakes and fails every rank waiting in (or later entering) this generation's barrier.
    void abort();
    const std::string& name() const { return name_; }
    int world() const;
    struct Header;

private:
    HostComm() = default;
    static int barrier(RadComm* c);
    static int aborted(RadComm* c);
    std::string name_;
    void* map_ = nullptr;
    uint64_t size_ = 0;
    Header* hdr_ = nullptr;
    int rank_ = -1;
    bool owner_ = false;
};

}  // namespace radiance::ipc
