// numa.cpp: node discovery from sysfs and the two system calls the pool makes on machines of
// several nodes (see numa.h). No libnuma: set_mempolicy is one system call.
#include "numa.h"

#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <sstream>

namespace cpu {

std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

std::vector<int> parse_cpulist(const std::string& text) {
    std::vector<int> cpus;
    std::stringstream in(text);
    std::string part;
    auto number = [](const std::string& s, size_t& at, long& out) {
        const size_t start = at;
        while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
        if (at == start || at - start > 6) return false;
        out = std::stol(s.substr(start, at - start));
        return true;
    };
    while (std::getline(in, part, ',')) {
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.pop_back();
        if (part.empty()) continue;
        size_t at = 0;
        long lo = 0, hi = 0;
        if (!number(part, at, lo)) return {};
        hi = lo;
        if (at < part.size() && part[at] == '-') {
            ++at;
            if (!number(part, at, hi) || hi < lo) return {};
        }
        if (at != part.size() || hi >= CPU_SETSIZE) return {};
        for (long c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

std::vector<NumaNode> numa_nodes(const std::string& root, const std::vector<int>& allowed) {
    std::vector<NumaNode> nodes;
    DIR* d = opendir(root.c_str());
    if (!d) return nodes;
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() <= 4 || name.compare(0, 4, "node") != 0 ||
            !std::all_of(name.begin() + 4, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            continue;
        std::ifstream f(root + "/" + name + "/cpulist");
        const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        NumaNode n;
        n.id = std::stoi(name.substr(4));
        for (int c : parse_cpulist(text))
            if (std::binary_search(allowed.begin(), allowed.end(), c)) n.cpus.push_back(c);
        if (!n.cpus.empty()) nodes.push_back(std::move(n));
    }
    closedir(d);
    std::sort(nodes.begin(), nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
    return nodes;
}

int worker_node(int index, size_t nodes) {
    if (nodes < 2 || index < 0) return -1;
    return static_cast<int>((static_cast<size_t>(index) + 1) % nodes);
}

bool interleave_memory(const std::vector<NumaNode>& nodes) {
    constexpr int kBits = 8 * sizeof(unsigned long);
    int max_id = 0;
    for (const NumaNode& n : nodes) max_id = std::max(max_id, n.id);
    std::vector<unsigned long> mask(static_cast<size_t>(max_id / kBits + 1), 0);
    for (const NumaNode& n : nodes) mask[static_cast<size_t>(n.id / kBits)] |= 1UL << (n.id % kBits);
    return syscall(SYS_set_mempolicy, MPOL_INTERLEAVE, mask.data(), static_cast<unsigned long>(max_id + 2)) == 0;
}

bool bind_to_node(const NumaNode& node) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : node.cpus) CPU_SET(c, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace cpu
