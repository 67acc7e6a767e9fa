// stream_writer.cpp: the channel between a handler's worker thread and its connection, and the
// Reply kinds built on it.
#include "http_server.h"

namespace radiance::frontend {

bool StreamWriter::write(std::string chunk) {
    {
        std::lock_guard lk(mu_);
        if (closed_ || responded_ || gone_) return false;
        body_ += chunk;
    }
    wake();
    return true;
}

void StreamWriter::close() {
    {
        std::lock_guard lk(mu_);
        if (closed_) return;
        closed_ = true;
        on_gone_.clear();
    }
    finished_cv_.notify_all();
    wake();
}

void StreamWriter::respond(Response res) {
    {
        std::lock_guard lk(mu_);
        if (responded_ || closed_) return;
        responded_ = true;
        response_ = std::move(res);
        on_gone_.clear();
    }
    finished_cv_.notify_all();
    wake();
}

bool StreamWriter::client_gone() const {
    std::lock_guard lk(mu_);
    return gone_;
}

void StreamWriter::on_client_gone(std::function<void()> cb) {
    {
        std::lock_guard lk(mu_);
        if (closed_ || responded_) return;
        if (!gone_) {
            on_gone_.push_back(std::move(cb));
            return;
        }
    }
    cb();
}

StreamWriter::Pending StreamWriter::take() {
    std::lock_guard lk(mu_);
    Pending p;
    p.body.swap(body_);
    p.closed = closed_;
    if (response_) {
        p.response = std::move(response_);
        response_.reset();
    }
    return p;
}

void StreamWriter::set_wakeup(std::function<void()> wakeup) {
    bool pending;
    {
        std::lock_guard lk(mu_);
        pending = !body_.empty() || closed_ || response_;
    }
    std::lock_guard lk(wake_mu_);
    wakeup_ = std::move(wakeup);
    if (wakeup_ && pending) wakeup_();
}

void StreamWriter::mark_client_gone() {
    std::vector<std::function<void()>> callbacks;
    {
        std::lock_guard lk(mu_);
        if (gone_) return;
        gone_ = true;
        callbacks.swap(on_gone_);
    }
    finished_cv_.notify_all();
    for (auto& cb : callbacks) cb();  // outside the lock: they may write or cancel
}

bool StreamWriter::wait_finished(std::chrono::milliseconds timeout) const {
    std::unique_lock lk(mu_);
    return finished_cv_.wait_for(lk, timeout, [&] { return closed_ || responded_ || gone_; });
}

void StreamWriter::wake() {
    std::lock_guard lk(wake_mu_);
    if (wakeup_) wakeup_();  // posts to the connection's strand; never runs the write inline
}

Reply Reply::stream(Response head, std::shared_ptr<StreamWriter> writer) {
    Reply r(std::move(head));
    r.kind = Kind::Stream;
    r.writer = std::move(writer);
    return r;
}

Reply Reply::deferred(std::shared_ptr<StreamWriter> writer) {
    Reply r(Response{});
    r.kind = Kind::Deferred;
    r.writer = std::move(writer);
    return r;
}

}  // namespace radiance::frontend
