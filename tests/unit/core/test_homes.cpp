#include "test_homes.h"

#include <atomic>
#include <unistd.h>

namespace fs = std::filesystem;

TestHome::TestHome() {
    static std::atomic<int> n{0};
    root = fs::temp_directory_path() / ("rad_home_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::remove_all(root);
    fs::create_directories(root);
}

TestHome::~TestHome() {
    std::error_code ec;
    fs::remove_all(root, ec);
}

TestHome& TestHome::add(const std::string& file, const std::string& as) {
    fs::path src = fs::path(TEST_PLUGIN_DIR) / file;
    fs::path dst = root / fs::path(file).parent_path() / (as.empty() ? fs::path(file).filename().string() : as);
    fs::create_directories(dst.parent_path());
    fs::copy_file(src, dst, fs::copy_options::overwrite_existing);
    return *this;
}
