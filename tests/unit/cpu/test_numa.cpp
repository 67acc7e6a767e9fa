// libcpu's node discovery (plugins/kernels/cpu/numa.cpp): CPU lists as Linux writes them, a
// fake /sys/devices/system/node tree (two nodes with CPUs, a memory-only node, entries that are
// not nodes), the process's affinity filter, and the round-robin placement of workers.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "numa.h"

namespace fs = std::filesystem;

namespace {

// A temporary sysfs-like tree: name -> cpulist text ("" writes an empty cpulist).
struct FakeNodes {
    fs::path root;
    explicit FakeNodes(const std::map<std::string, std::string>& dirs) {
        std::string tmpl = (fs::temp_directory_path() / "radnumaXXXXXX").string();
        root = mkdtemp(tmpl.data());
        for (const auto& [name, list] : dirs) {
            fs::create_directories(root / name);
            std::ofstream(root / name / "cpulist") << list << "\n";
        }
        fs::create_directories(root / "power");  // not a node
    }
    ~FakeNodes() { fs::remove_all(root); }
};

std::vector<int> range(int lo, int hi) {
    std::vector<int> v;
    for (int c = lo; c <= hi; ++c) v.push_back(c);
    return v;
}

}  // namespace

TEST_CASE("cpu lists parse as Linux writes them", "[numa]") {
    CHECK(cpu::parse_cpulist("0-3") == range(0, 3));
    CHECK(cpu::parse_cpulist("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
    CHECK(cpu::parse_cpulist("5") == std::vector<int>{5});
    CHECK(cpu::parse_cpulist("4-5,0-1") == std::vector<int>{0, 1, 4, 5});
    CHECK(cpu::parse_cpulist("").empty());
    CHECK(cpu::parse_cpulist("\n").empty());
}

TEST_CASE("text that is not a cpu list gives no cpus", "[numa]") {
    CHECK(cpu::parse_cpulist("3-1").empty());
    CHECK(cpu::parse_cpulist("a-b").empty());
    CHECK(cpu::parse_cpulist("1-").empty());
    CHECK(cpu::parse_cpulist("1,x").empty());
    CHECK(cpu::parse_cpulist("99999999").empty());
    CHECK(cpu::parse_cpulist("0-1048576").empty());  // past CPU_SETSIZE
}

TEST_CASE("nodes come from node<N>/cpulist, filtered by the allowed cpus", "[numa]") {
    FakeNodes t({{"node0", "0-3"}, {"node1", "4-7"}, {"node2", ""}, {"node10", "8-9"}, {"nodeX", "10"}});
    const auto all = cpu::numa_nodes(t.root.string(), range(0, 15));
    REQUIRE(all.size() == 3);  // node2 has memory only, nodeX is not a node
    CHECK(all[0].id == 0);
    CHECK(all[0].cpus == range(0, 3));
    CHECK(all[1].id == 1);
    CHECK(all[1].cpus == range(4, 7));
    CHECK(all[2].id == 10);  // by id, not by name
    CHECK(all[2].cpus == range(8, 9));

    // A process confined to cpus 2-5 sees two nodes of two cpus each; to 0-3, one node.
    const auto some = cpu::numa_nodes(t.root.string(), range(2, 5));
    REQUIRE(some.size() == 2);
    CHECK(some[0].cpus == std::vector<int>{2, 3});
    CHECK(some[1].cpus == std::vector<int>{4, 5});
    CHECK(cpu::numa_nodes(t.root.string(), range(0, 3)).size() == 1);
}

TEST_CASE("a missing node directory means no nodes", "[numa]") {
    CHECK(cpu::numa_nodes("/nonexistent/radiance/node", range(0, 3)).empty());
}

TEST_CASE("workers spread round robin over the nodes, from the second", "[numa]") {
    CHECK(cpu::worker_node(0, 1) == -1);  // one node: nothing to spread
    CHECK(cpu::worker_node(0, 0) == -1);
    CHECK(cpu::worker_node(0, 2) == 1);
    CHECK(cpu::worker_node(1, 2) == 0);
    CHECK(cpu::worker_node(2, 2) == 1);
    // Any region of t threads (the caller, taken to be on node 0, and workers 0..t-2) uses every
    // node, and no node more than once above another.
    for (size_t nodes = 2; nodes <= 4; ++nodes)
        for (int t = 1; t <= 16; ++t) {
            std::vector<int> per(nodes, 0);
            per[0] = 1;  // the caller
            for (int w = 0; w + 1 < t; ++w) ++per[static_cast<size_t>(cpu::worker_node(w, nodes))];
            const auto [lo, hi] = std::minmax_element(per.begin(), per.end());
            CHECK(*hi - *lo <= 1);
        }
}

TEST_CASE("this process's cpus are a non-empty ascending list", "[numa]") {
    const auto cpus = cpu::allowed_cpus();
    REQUIRE(!cpus.empty());
    CHECK(std::is_sorted(cpus.begin(), cpus.end()));
    // On this machine's real tree, every node found holds only allowed cpus.
    for (const auto& n : cpu::numa_nodes("/sys/devices/system/node", cpus))
        for (int c : n.cpus) CHECK(std::binary_search(cpus.begin(), cpus.end(), c));
}
