// radiance: the front end. `radiance serve` answers HTTP; model execution lives in the
// radiance-worker processes it drives (one per GPU rank).
#include <csignal>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "http_server.h"
#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

using namespace radiance;
using namespace radiance::frontend;

namespace {

struct ServeOptions {
    HttpOptions http;
    std::string model;
    std::string homes;
    std::string kernels;
    bool accept_reference = false;
};

HttpServer* g_server = nullptr;
void on_signal(int) {
    if (g_server) g_server->stop();
}

int usage() {
    std::cerr << "usage: radiance serve [--model PATH] [--host ADDR] [--port N] [--threads N]\n"
                 "                      [--kernels LIST] [--radiance-home HOMES] [--debug-accept-reference-kernels]\n";
    return 2;
}

ServeOptions parse(int argc, char** argv) {
    ServeOptions o;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw Error(a + " needs a value");
            return argv[++i];
        };
        auto number = [&](const std::string& v, long lo, long hi) {
            char* end = nullptr;
            long n = std::strtol(v.c_str(), &end, 10);
            if (!end || *end || n < lo || n > hi)
                throw Error(a + " must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + v + "'");
            return n;
        };
        if (a == "--model" || a == "-m") o.model = value();
        else if (a == "--host") o.http.host = value();
        else if (a == "--port") o.http.port = static_cast<unsigned short>(number(value(), 0, 65535));
        else if (a == "--threads") o.http.threads = static_cast<int>(number(value(), 1, 256));
        else if (a == "--kernels") o.kernels = value();
        else if (a == "--radiance-home") o.homes = value();
        else if (a == "--debug-accept-reference-kernels") o.accept_reference = true;
        else throw Error("unknown option " + a);
    }
    return o;
}

int serve(const ServeOptions& o) {
    core::LoadOptions lo;
    lo.homes = core::resolve_homes(o.homes);
    lo.kernels = o.kernels.empty() ? core::kernels_from_env() : std::optional(str::split(o.kernels, ","));
    core::Registry reg = core::Registry::load(lo);
    log::info("plugin search path: ", str::join(lo.homes, ":"), "; ", reg.kernel_libraries().size(), " kernel libraries, ",
              reg.architectures().size(), " architectures");

    std::string model_name;
    std::string not_ready = "no model loaded (pass --model PATH)";
    if (!o.model.empty()) {
        auto c = container::Reader::open(o.model);  // a bad container is a startup error
        auto it = c->meta().find("general.name");
        model_name = it != c->meta().end() ? it->second.to_string() : o.model;
        not_ready = "model " + model_name + " is not served yet: no worker has joined";
    }

    HttpServer server(o.http);
    server.route(http::verb::get, "/health", [](const Request& r) { return json_response(r, http::status::ok, R"({"status":"ok"})"); });
    server.route(http::verb::get, "/ready", [&](const Request& r) {
        return json_response(r, http::status::service_unavailable, nlohmann::json({{"status", not_ready}}).dump());
    });
    server.route(http::verb::get, "/v1/models", [&](const Request& r) {
        nlohmann::json data = nlohmann::json::array();
        if (!model_name.empty()) data.push_back({{"id", model_name}, {"object", "model"}, {"owned_by", "radiance"}});
        return json_response(r, http::status::ok, nlohmann::json({{"object", "list"}, {"data", data}}).dump());
    });
    g_server = &server;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    server.run();
    log::info("stopped");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) != "serve") return usage();
    try {
        return serve(parse(argc, argv));
    } catch (const std::exception& e) {
        std::cerr << "radiance: " << e.what() << "\n";
        return 1;
    }
}
