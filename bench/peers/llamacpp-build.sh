#!/usr/bin/env bash
# llamacpp-build.sh SRC_TARBALL — on the GPU machine (no internet): unpack llama.cpp's source
# (made by llamacpp-pack.sh) into /tmp/llamacpp-src and build two trees with -j${LLAMACPP_JOBS:-14}:
#   /tmp/llamacpp-cpu   GGML_CUDA=OFF, GGML_NATIVE=ON            targets llama-bench llama-quantize (first: fast)
#   /tmp/llamacpp-cuda  GGML_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=90a, GGML_NATIVE=ON
#                                                                targets llama-bench llama-batched-bench
# Log: /tmp/llamacpp-build.log. Each tree ends by touching /tmp/llamacpp-<tree>.done or .failed
# (holding the commit, or the reason). /tmp/llamacpp-build.pid holds "PID SID" while it runs (a
# CPU benchmark may SIGSTOP/SIGCONT that session's processes to measure on idle cores).
# A tree whose .done names the same commit and whose binaries exist is not rebuilt.
# Meant to be started detached so that it outlives the call that starts it:
#   setsid nohup bash bench/peers/llamacpp-build.sh .devcarry/llamacpp.tar.xz >/dev/null 2>&1 </dev/null &
# (bench/gpu/device_run.sh peers-build does this from a copy in /tmp).
set -uo pipefail

main() {
  local tarball=${1:?usage: llamacpp-build.sh SRC_TARBALL}
  local src=/tmp/llamacpp-src log=/tmp/llamacpp-build.log jobs=${LLAMACPP_JOBS:-14}
  local pidf=/tmp/llamacpp-build.pid
  if [[ -f $pidf ]] && kill -0 "$(cut -d' ' -f1 "$pidf")" 2>/dev/null; then
    echo "llamacpp-build: already running (pid $(cat "$pidf"))" | tee -a "$log"
    return 0
  fi
  # Session id (setsid makes this shell its leader): ninja puts each compiler in a process group of
  # its own, so a pause has to reach the whole session, not one group.
  local stat sid
  stat=$(< /proc/$$/stat)
  stat=${stat##*) }
  read -r _ _ _ sid _ <<< "$stat"
  echo "$$ $sid" > "$pidf"
  trap 'rm -f /tmp/llamacpp-build.pid' EXIT
  exec >> "$log" 2>&1
  say() { echo "llamacpp-build $(date -u +%T): $*"; }
  say "start: tarball $tarball, $jobs jobs, $(nproc) cpus, pid $$ session $sid"

  rm -rf "$src" && mkdir -p "$src" && tar -C "$src" -xJf "$tarball" || {
    say "cannot unpack $tarball"
    for t in cpu cuda; do echo "unpack failed" > /tmp/llamacpp-$t.failed; done
    return 1
  }
  local commit
  commit=$(cat "$src/LLAMACPP_COMMIT" 2>/dev/null || echo unknown)
  say "llama.cpp commit $commit"

  # cmake and ninja: on PATH, else the ones pip installed into the Python that holds PyTorch.
  local cmake ninja="" pybin
  pybin=$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))' 2>/dev/null || true)
  cmake=$(command -v cmake || true)
  [[ -z $cmake && -n $pybin && -x $pybin/cmake ]] && cmake=$pybin/cmake
  [[ -z $cmake ]] && cmake=$(python3 -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' 2>/dev/null || true)
  [[ -z $cmake && -x /opt/torch/.venv/bin/cmake ]] && cmake=/opt/torch/.venv/bin/cmake
  if [[ -z $cmake || ! -x $cmake ]]; then
    say "ERROR: no cmake on this machine (not on PATH, not in python3's bin, no 'cmake' Python module); llama.cpp cannot be built here. Carry a cmake wheel (see the device README) and run again."
    for t in cpu cuda; do echo "no cmake" > /tmp/llamacpp-$t.failed; done
    return 1
  fi
  ninja=$(command -v ninja || true)
  [[ -z $ninja && -n $pybin && -x $pybin/ninja ]] && ninja=$pybin/ninja
  [[ -z $ninja ]] && ninja=$(python3 -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))' 2>/dev/null || true)
  local gen=()
  if [[ -n $ninja && -x $ninja ]]; then
    gen=(-G Ninja -DCMAKE_MAKE_PROGRAM="$ninja")
  elif ! command -v make >/dev/null; then
    say "ERROR: neither ninja nor make found"
    for t in cpu cuda; do echo "no ninja or make" > /tmp/llamacpp-$t.failed; done
    return 1
  fi
  say "cmake $cmake ($("$cmake" --version | head -1)), generator ${gen[*]:-Unix Makefiles}, c++ $(c++ --version 2>/dev/null | head -1)"

  local common=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_COMMON=ON
    -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_NUMBER=0 -DLLAMA_BUILD_COMMIT="${commit:0:9}")

  # build TREE TARGETS CMAKE_ARGS...; a configure that fails is tried once more with $retry_args
  # appended (a later -D wins) before the tree is marked failed.
  build() {
    local tree=$1 targets=$2; shift 2
    local dir=/tmp/llamacpp-$tree t0=$SECONDS
    if [[ $(cat /tmp/llamacpp-$tree.done 2>/dev/null) == "$commit" ]] && [[ -x $dir/bin/llama-bench ]]; then
      say "$tree: already built for $commit"
      return 0
    fi
    rm -f /tmp/llamacpp-$tree.done /tmp/llamacpp-$tree.failed  # an unfinished tree continues where it stopped
    say "$tree: configure $*"
    if ! "$cmake" -S "$src" -B "$dir" "${gen[@]}" "${common[@]}" "$@"; then
      local ok=0
      if [[ -n ${retry_args:-} ]]; then
        say "$tree: configure failed; again with $retry_args"
        rm -rf "$dir"
        # shellcheck disable=SC2086
        "$cmake" -S "$src" -B "$dir" "${gen[@]}" "${common[@]}" "$@" $retry_args && ok=1
      fi
      if (( !ok )); then
        echo "configure failed" > /tmp/llamacpp-$tree.failed
        say "$tree: FAILED configure after $((SECONDS - t0)) s"
        return 1
      fi
    fi
    say "$tree: build $targets"
    # shellcheck disable=SC2086
    if "$cmake" --build "$dir" -j "$jobs" --target $targets; then
      echo "$commit" > /tmp/llamacpp-$tree.done
      say "$tree: DONE in $((SECONDS - t0)) s: $(ls "$dir/bin" | tr '\n' ' ')"
    else
      echo "build failed" > /tmp/llamacpp-$tree.failed
      say "$tree: FAILED build after $((SECONDS - t0)) s"
      return 1
    fi
  }

  retry_args="" build cpu "llama-bench llama-quantize" -DGGML_CUDA=OFF

  local nvcc=/usr/local/cuda/bin/nvcc
  [[ -x $nvcc ]] || nvcc=$(command -v nvcc || true)
  if [[ -z $nvcc ]]; then
    echo "no nvcc" > /tmp/llamacpp-cuda.failed
    say "cuda: FAILED: no nvcc"
    return 1
  fi
  PATH=$(dirname "$nvcc"):$PATH
  export PATH CUDACXX=$nvcc
  local cuda=(-DGGML_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DGGML_CUDA_NCCL=OFF)
  # 90a (sm_90a features); a CMake too old to take the "a" suffix gets plain 90 instead
  retry_args="-DCMAKE_CUDA_ARCHITECTURES=90" build cuda "llama-bench llama-batched-bench" "${cuda[@]}" \
    -DCMAKE_CUDA_ARCHITECTURES=90a
  say "end"
}

main "$@"
exit $?
