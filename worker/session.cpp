#include "session.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::worker {

namespace pb = radiance::v1;

Session::Session(const std::string& addr_in, int connect_timeout_s) {
    std::string addr = addr_in;
    if (!addr.empty() && addr[0] == '/') addr = "unix:" + addr;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(512 << 20);
    args.SetMaxSendMessageSize(512 << 20);
    channel_ = grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args);
    auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(connect_timeout_s);
    if (!channel_->WaitForConnected(deadline))
        throw Error("cannot reach the front end at " + addr + " within " + std::to_string(connect_timeout_s) + " s");
    stub_ = pb::Control::NewStub(channel_);
    stream_ = stub_->Session(&ctx_);
}

Session::~Session() {
    quit_ = true;
    cv_.notify_all();
    ctx_.TryCancel();
    if (heart_.joinable()) heart_.join();
    if (reader_.joinable()) reader_.join();
}

pb::Welcome Session::join(const pb::Hello& hello) {
    pb::WorkerMessage m;
    *m.mutable_hello() = hello;
    if (!send(m)) throw Error("the front end closed the connection before the hello");
    pb::FrontMessage f;
    if (!stream_->Read(&f) || !f.has_welcome()) throw Error("the front end closed the connection instead of welcoming this worker");
    if (!f.welcome().accepted()) throw Error("the front end refused this worker: " + f.welcome().reason());
    return f.welcome();
}

bool Session::send(const pb::WorkerMessage& m) {
    std::lock_guard<std::mutex> lk(write_mu_);
    return stream_->Write(m);
}

void Session::start_background() {
    reader_ = std::thread([this] { read_loop(); });
    heart_ = std::thread([this] { heartbeat_loop(); });
}

void Session::read_loop() {
    pb::FrontMessage f;
    while (stream_->Read(&f)) {
        if (f.has_step()) {
            std::lock_guard<std::mutex> lk(mu_);
            steps_.push_back(f.step().body());
            cv_.notify_all();
        } else if (f.has_shutdown() || f.has_drain()) {
            std::lock_guard<std::mutex> lk(mu_);
            stop_reason_ = f.has_shutdown() ? f.shutdown().reason() : "drain";
            stop_ = true;
            cv_.notify_all();
        }
    }
    if (!quit_ && !stop_) log::error("lost the connection to the front end");
    lost_ = true;
    cv_.notify_all();
}

void Session::heartbeat_loop() {
    uint64_t seq = 0;
    std::unique_lock<std::mutex> lk(mu_);
    while (!quit_ && !lost_) {
        cv_.wait_for(lk, std::chrono::milliseconds(100));
        if (quit_ || lost_) break;
        lk.unlock();
        pb::WorkerMessage m;
        m.mutable_heartbeat()->set_seq(++seq);
        m.mutable_heartbeat()->set_steps_done(steps_done.load());
        send(m);
        lk.lock();
    }
}

bool Session::next_step(std::string* out, int timeout_ms) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return !steps_.empty() || stop_ || lost_; });
    if (steps_.empty()) return false;
    *out = std::move(steps_.front());
    steps_.pop_front();
    return true;
}

std::string Session::stop_reason() const {
    std::lock_guard<std::mutex> lk(mu_);
    return stop_reason_;
}

}  // namespace radiance::worker
