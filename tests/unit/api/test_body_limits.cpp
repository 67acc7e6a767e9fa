// Hostile bodies cost bounded time (issue [13]): an object of many keys is refused before it is
// parsed (ordered_json's linear key search made a 100k-key /tokenize body take 12-14 s of an io
// thread), and logit_bias holds at most kMaxLogitBias entries in either shape.
// Mutations run (2026-12-04): shape_error() not counting keys (the old depth-only scan) fails
// "100k keys" (the body parses for seconds, then answers 200) and the object-form logit_bias cap;
// check_bias_count() removed fails the pair-form cap (1025 pairs accepted); kMaxObjectKeys 4096
// makes "at the caps" take ~0.5 s (63 x 4096 keys would: 15 x 4096 took 0.52 s).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "api_test_util.h"
#include "generation.h"
#include "json_io.h"

using namespace api_test;
using radiance::frontend::kMaxBodyKeys;
using radiance::frontend::kMaxLogitBias;
using radiance::frontend::kMaxObjectKeys;

namespace {

// {"content":"hi","k0":0,"k1":1,...}: n extra keys in the top object.
std::string wide_object(size_t n) {
    std::string s = "{\"content\":\"hi\"";
    s.reserve(n * 12);
    for (size_t i = 0; i < n; ++i) s += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
    return s + "}";
}

std::string bias_object(size_t n) {
    std::string s = "{";
    for (size_t i = 0; i < n; ++i) {
        s += i ? ",\"" : "\"";
        s += std::to_string(i);
        s += "\":1";
    }
    return s + "}";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("api body limits: 100k keys are refused at once, naming the cap", "[api]") {
    ApiServer s;
    const std::string body = wide_object(100000);  // ~1.3 MB
    const auto t = std::chrono::steady_clock::now();
    Answer a = s.post("/tokenize", body);
    const double took = seconds_since(t);
    INFO(a.body.substr(0, 300));
    CHECK(a.status == 400);
    CHECK(a.body.find("more than " + std::to_string(kMaxObjectKeys) + " keys") != std::string::npos);
    // Refused by one pass over the bytes: milliseconds (12 s before); 0.5 s leaves room for a slow
    // or sanitized build without letting a quadratic parse (seconds) through.
    CHECK(took < 0.5);
}

TEST_CASE("api body limits: keys over many objects count together", "[api]") {
    ApiServer s;
    // 80 objects of 1000 keys: each within kMaxObjectKeys, 80k keys in all.
    std::string arr = "[";
    for (int o = 0; o < 80; ++o) {
        arr += o ? "," : "";
        arr += wide_object(999);
    }
    Answer a = s.post("/tokenize", "{\"content\":\"hi\",\"x\":" + arr + "]}");
    INFO(a.body.substr(0, 300));
    CHECK(a.status == 400);
    CHECK(a.body.find("more than " + std::to_string(kMaxBodyKeys) + " JSON object keys") != std::string::npos);
}

TEST_CASE("api body limits: bodies at the caps are served, in bounded time", "[api]") {
    ApiServer s;
    // About the costliest body the caps allow for ordered_json: 63 objects of 1024 keys (64512 of
    // the 65536 keys a body may hold).
    std::string arr = "[";
    for (int o = 0; o < 63; ++o) {
        arr += o ? "," : "";
        arr += wide_object(kMaxObjectKeys - 1);
    }
    const std::string body = "{\"content\":\"hi\",\"x\":" + arr + "]}";
    const auto t = std::chrono::steady_clock::now();
    Answer a = s.post("/tokenize", body);
    const double took = seconds_since(t);
    INFO(a.body.substr(0, 300));
    CHECK(a.status == 200);
    WARN("63 x 1024-key objects parsed and answered in " << took << " s");
    CHECK(took < 1.0);  // the bound for any body within the limits
}

TEST_CASE("api body limits: logit_bias cap, OpenAI object form", "[api]") {
    ApiServer s;
    auto body = [](size_t n) {
        return "{\"model\":\"fake-model\",\"prompt\":\"Hi\",\"max_tokens\":1,\"logit_bias\":" + bias_object(n) + "}";
    };
    CHECK(s.post("/v1/completions", body(kMaxLogitBias)).status == 200);
    Answer a = s.post("/v1/completions", body(kMaxLogitBias + 1));
    INFO(a.body);
    CHECK(a.status == 400);
    CHECK(a.json_body()["error"]["param"] == "logit_bias");
    CHECK(a.body.find("'logit_bias' holds a JSON object of more than " + std::to_string(kMaxLogitBias) + " keys") != std::string::npos);
}

TEST_CASE("api body limits: logit_bias cap, llama-server pair form", "[api]") {
    ApiServer s;
    auto body = [](size_t n) {
        std::string pairs = "[";
        for (size_t i = 0; i < n; ++i) {
            pairs += i ? ",[" : "[";
            pairs += std::to_string(i);
            pairs += ",false]";
        }
        return "{\"prompt\":\"Hi\",\"n_predict\":1,\"logit_bias\":" + pairs + "]}";
    };
    CHECK(s.post("/completion", body(kMaxLogitBias)).status == 200);
    Answer a = s.post("/completion", body(kMaxLogitBias + 1));
    INFO(a.body);
    CHECK(a.status == 400);
    CHECK(a.json_body()["error"]["param"] == "logit_bias");
    CHECK(a.body.find("has " + std::to_string(kMaxLogitBias + 1) + " entries; at most " + std::to_string(kMaxLogitBias)) !=
          std::string::npos);
}
