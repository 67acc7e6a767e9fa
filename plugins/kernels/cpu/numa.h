// numa.h: the machine's memory nodes as Linux describes them under /sys/devices/system/node, and
// how the pool spreads its workers over them.
//
// Decode streams every weight once a token, so on a machine of several nodes it is bound by the
// memory of all nodes together only when the weights are spread over them and every node's cores
// read. The pool therefore binds worker i to the CPUs of one node, round robin (any region of t
// threads uses every node about equally), and the process allocates interleaved across the nodes
// from rad_plugin_open on, so the container's pages read in after it land on all of them. With one
// node (most VMs, every machine this project is measured on so far) nothing changes.
// RADIANCE_CPU_NUMA=0 turns both off.
#pragma once
#include <string>
#include <vector>

namespace cpu {

struct NumaNode {
    int id = 0;
    std::vector<int> cpus;  // ascending, only those this process may run on
};

// The CPUs this process may run on, ascending (empty when the affinity cannot be read).
std::vector<int> allowed_cpus();

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; an empty list for text that is not a CPU list.
std::vector<int> parse_cpulist(const std::string& text);

// The nodes under `root` (node<N>/cpulist) that hold at least one CPU of `allowed`, by id.
std::vector<NumaNode> numa_nodes(const std::string& root, const std::vector<int>& allowed);

// The node (an index into `nodes`) worker `index` runs on: worker 0 on the second node, since the
// caller, unbound, is usually on the first; -1 with fewer than two nodes.
int worker_node(int index, size_t nodes);

// Interleaves this thread's future allocations (and those of threads it starts) over `nodes`;
// false when the kernel refuses.
bool interleave_memory(const std::vector<NumaNode>& nodes);

// Binds the calling thread to the CPUs of `node`; false when the kernel refuses.
bool bind_to_node(const NumaNode& node);

}  // namespace cpu
