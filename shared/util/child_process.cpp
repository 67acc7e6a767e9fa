// child_process.cpp: fork + exec with one pipe for the child's stdout and stderr.
#include "radiance/util/child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "radiance/util/error.h"

namespace radiance::util {

std::string self_dir() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return ".";
    buf[n] = 0;
    return std::filesystem::path(buf).parent_path().string();
}

ChildResult run_child(const std::vector<std::string>& args) {
    if (args.empty()) throw Error("run_child: no program given");
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("pipe for ") + args[0] + ": " + std::strerror(errno));
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        throw Error(std::string("fork for ") + args[0] + ": " + std::strerror(errno));
    }
    if (pid == 0) {
        // The server blocks its signals in every thread (one thread takes them): the child must
        // not inherit that, or it could not be stopped.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        const int null_in = open("/dev/null", O_RDONLY);
        if (null_in >= 0) dup2(null_in, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execv(argv[0], argv.data());
        const std::string why = std::string("cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
        (void)!write(2, why.data(), why.size());
        _exit(127);
    }
    close(fds[1]);
    ChildResult r;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0)
            r.output.append(buf, static_cast<size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    return r;
}

}  // namespace radiance::util
