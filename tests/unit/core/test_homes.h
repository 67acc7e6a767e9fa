// test_homes.h: builds throwaway RADIANCE_HOME folders out of the test plugins.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

struct TestHome {
    std::filesystem::path root;
    TestHome();
    ~TestHome();
    // Copies test plugin `file` (e.g. "kernels/libtk_a.so") into this home, optionally renamed.
    TestHome& add(const std::string& file, const std::string& as = "");
    std::string str() const { return root.string(); }
};
