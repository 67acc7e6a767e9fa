// session.h: the worker's side of the control plane: one bidirectional stream to the front end
// carrying hello/welcome, load status, heartbeats, and (for remote or --transport grpc workers)
// the steps themselves.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "radiance/control.grpc.pb.h"

namespace radiance::worker {

class Session {
public:
    // Connects to `addr` ("unix:/path", "/path" or "host:port"), retrying until `connect_timeout_s`.
    Session(const std::string& addr, int connect_timeout_s);
    ~Session();

    // Sends Hello and waits for Welcome. Throws radiance::Error when refused or disconnected.
    radiance::v1::Welcome join(const radiance::v1::Hello& hello);
    // Starts the heartbeat (every 100 ms) and the reader of front-end messages.
    void start_background();
    bool send(const radiance::v1::WorkerMessage& m);

    // Steps that arrive on the stream (gRPC transport). Waits up to timeout_ms; false on timeout.
    bool next_step(std::string* out, int timeout_ms);
    bool stop_requested() const { return stop_.load(); }
    bool connection_lost() const { return lost_.load(); }
    std::string stop_reason() const;
    std::atomic<uint64_t> steps_done{0};

private:
    void read_loop();
    void heartbeat_loop();

    std::shared_ptr<grpc::Channel> channel_;
    std::unique_ptr<radiance::v1::Control::Stub> stub_;
    grpc::ClientContext ctx_;
    std::unique_ptr<grpc::ClientReaderWriter<radiance::v1::WorkerMessage, radiance::v1::FrontMessage>> stream_;
    std::mutex write_mu_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::string> steps_;
    std::atomic<bool> stop_{false}, lost_{false}, quit_{false};
    std::string stop_reason_;
    std::thread reader_, heart_;
};

}  // namespace radiance::worker
