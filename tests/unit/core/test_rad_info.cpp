// rad-info, run as a user would: a good container prints, a truncated one exits non-zero naming the problem.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

#include "radiance/container/container.h"

using namespace radiance::container;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
struct Run {
    int status;
    std::string out;
};
Run run(const std::string& args) {
    std::string cmd = std::string(RAD_INFO_BIN) + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int st = pclose(p);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}
}  // namespace

TEST_CASE("rad-info prints a container and refuses a truncated one", "[rad-info]") {
    std::string path = (fs::temp_directory_path() / ("rad_info_" + std::to_string(getpid()) + ".rad")).string();
    {
        Writer w(path);
        w.set_meta("general.architecture", MetaValue::of_str("llama"));
        std::vector<uint8_t> bytes(4 * 8 * 2, 1);
        w.add_tensor("tok_embd.weight", w.add_encoding(rad_encoding_plain(RAD_BF16)), {4, 8}, RAD_BF16, {bytes});
        w.set_blob(Section::Recipe, "cast bf16");
        w.finish();
    }
    Run ok = run(path + " -v --meta --recipe --verify");
    CHECK(ok.status == 0);
    CHECK_THAT(ok.out, Contains("tok_embd.weight") && Contains("[4, 8]") && Contains("plain {codes:bf16}") &&
                           Contains("general.architecture = llama") && Contains("cast bf16") && Contains("PLANES"));
    fs::resize_file(path, fs::file_size(path) - 7);
    Run bad = run(path);
    CHECK(bad.status != 0);
    CHECK_THAT(bad.out, Contains(path) && Contains("truncated"));
    Run missing = run(path + ".nope");
    CHECK(missing.status != 0);
    CHECK_THAT(missing.out, Contains("cannot open"));
    fs::remove(path);
}
