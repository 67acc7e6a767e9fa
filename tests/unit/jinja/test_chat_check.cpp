// radiance_chat_check (rad-tokcheck --chat): passes on the real golden file, reports a
// tampered copy entry by entry, and refuses an unreadable file.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "chat_check.h"

namespace {
namespace fs = std::filesystem;

// Runs the check with std::cout captured.
int run_check(const std::string& path, std::string& output) {
    std::ostringstream captured;
    std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
    const int rc = radiance_chat_check(path);
    std::cout.rdbuf(old);
    output = captured.str();
    return rc;
}
}  // namespace

TEST_CASE("jinja chat check passes the shared golden file", "[jinja][golden]") {
    std::string out;
    CHECK(run_check(RAD_GOLDEN_CHAT_TEMPLATES, out) == 0);
    CHECK_THAT(out, Catch::Matchers::EndsWith(" passed, 0 failed\n"));
}

TEST_CASE("jinja chat check reports each mismatch and counts failures", "[jinja]") {
    std::ifstream in(RAD_GOLDEN_CHAT_TEMPLATES);
    nlohmann::ordered_json golden = nlohmann::ordered_json::parse(in);
    const size_t total = golden["renders"].size();
    REQUIRE(total >= 2);
    golden["renders"][0]["rendered"] = golden["renders"][0]["rendered"].get<std::string>() + "extra";
    golden["renders"][1].erase("rendered");
    golden["renders"][1]["error"] = "made up";
    // The copy has no tokenizers/ beside it: special tokens come from the family table.
    const fs::path dir = fs::temp_directory_path() / ("rad_jinja_chat_check_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / "golden.json";
    std::ofstream(path) << golden.dump();

    std::string out;
    CHECK(run_check(path.string(), out) == 1);
    CHECK_THAT(out, Catch::Matchers::Contains("[0] "));
    CHECK_THAT(out, Catch::Matchers::Contains("first difference at byte"));
    CHECK_THAT(out, Catch::Matchers::Contains("[1] "));
    CHECK_THAT(out, Catch::Matchers::Contains("expected an error"));
    CHECK_THAT(out, Catch::Matchers::EndsWith(std::to_string(total - 2) + " passed, 2 failed\n"));
    fs::remove_all(dir);
}

TEST_CASE("jinja chat check refuses a missing or malformed file", "[jinja]") {
    std::string out;
    CHECK(run_check("/nonexistent/golden.json", out) == 2);
}
