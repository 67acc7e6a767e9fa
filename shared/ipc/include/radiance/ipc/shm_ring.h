// shm_ring.h: a shared-memory mailbox between the front end and one worker on the same host.
//
// Two single-producer single-consumer rings in one POSIX shared-memory object: requests (step
// descriptors, front end -> worker) and results (worker -> front end). A side with nothing to do
// sleeps on a futex doorbell in the shared page, so an idle worker costs no CPU; the producer
// rings the bell only when the consumer said it is asleep.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace radiance::ipc {

class ShmRing {
public:
    // The front end creates the object (name like "/radiance-<pid>-r<rank>-g<gen>").
    static std::unique_ptr<ShmRing> create(const std::string& name, uint32_t slots, uint64_t request_slot_bytes,
                                           uint64_t result_slot_bytes);
    // The worker opens it by name. Throws radiance::Error if absent or malformed.
    static std::unique_ptr<ShmRing> open(const std::string& name);
    ~ShmRing();
    ShmRing(const ShmRing&) = delete;
    ShmRing& operator=(const ShmRing&) = delete;

    const std::string& name() const { return name_; }
    uint64_t bytes() const { return size_; }
    uint64_t request_capacity() const;  // largest message a slot holds
    uint64_t result_capacity() const;

    // Front end: queue a request (false: ring full or message too large); wait for a result.
    bool push_request(std::string_view msg);
    // Waits up to timeout_us microseconds; false on timeout.
    bool pop_result(std::string* out, int64_t timeout_us);
    // Worker: wait for a request; publish a result.
    bool pop_request(std::string* out, int64_t timeout_us);
    bool push_result(std::string_view msg);

    // Removes the name (the mapping stays valid for whoever holds it).
    void unlink();

private:
    ShmRing() = default;
    struct Header;
    struct Lane;
    bool push(Lane& lane, uint8_t* slots, uint64_t slot_bytes, std::string_view msg);
    bool pop(Lane& lane, const uint8_t* slots, uint64_t slot_bytes, std::string* out, int64_t timeout_us);

    std::string name_;
    void* map_ = nullptr;
    uint64_t size_ = 0;
    Header* hdr_ = nullptr;
    uint8_t* req_slots_ = nullptr;
    uint8_t* res_slots_ = nullptr;
    bool owner_ = false;
};

}  // namespace radiance::ipc
