#!/usr/bin/env bash
# GPU check for a fresh CUDA machine (nvcc, cmake, a C++17 compiler; no Node.js, no network needed), in one call of
# at most 9 minutes, in the order of what matters most when a lent machine may give one call only:
#  1. builds the native runtime with CUDA (no addon) and runs the ctest label "gpu";
#  2. the benchmark on an OLMoE-1B-7B-shaped model with random weights (kernel table, full residency and a partial
#     expert budget, the IFEval-shaped workload) into $OUT/gpu-check.json;
#  3. the peer beside it (scripts/gpu-peer.sh): llama.cpp with CUDA and the same model as a Q4_0 GGUF, prepared in the
#     background from the start on the cores our build and the GPU runs leave idle; when ready in time, the peer's
#     figures and a second run of ours (the benchmark above opened the alternation), the ratios into
#     $OUT/gpu-check-peer.json and under "peer" in gpu-check.json; otherwise it says so;
#  4. in the time left, compute-sanitizer's memcheck, racecheck and synccheck over the kernel tests (test-gpu-ops):
#     what the CPU simulator cannot show (shared-memory races between warps that run at once, barriers in divergent
#     code), and initcheck (reads of device memory nothing wrote; informational); then, when Nsight Compute is there,
#     the time of each kernel of a batch-1 decode step ($OUT/gpu-kernels.txt).
# Writes $OUT/gpu-check.log too. On a machine without the ../shared beside this checkout, run scripts/gpu-carry.sh
# here first and carry the folders it names.
# Env: GPU_CHECK_ARCHS (CMake CUDA architectures; default: the first GPU's compute capability),
#      GPU_CHECK_QUICK=1 (fewer benchmark steps), GPU_CHECK_PARTIAL_SLOTS (default 16 of 64 experts per layer),
#      GPU_CHECK_MODE=peer (build, then only the peer comparison, its own two runs of ours around the peer's; on a warm
#      machine it reuses what an earlier call built and wrote) or GPU_CHECK_MODE=checks (build, then only step 4: for
#      a second call when the first had no time left for it), GPU_CHECK_PEER=0 (leave step 3 out),
#      GPU_CHECK_END (those two modes' end, seconds from the start; default 530), GPU_CHECK_BUILD_TIMEOUT (seconds, default 300), GPU_CHECK_IFEVAL_MAX_S (the IFEval-shaped workload's limit,
#      default 120: past it the run stops and reports the tokens made by then).
set -u
cd "$(dirname "$0")/.."
START=$(date +%s)
BUILD=native/build-gpu
LOG="${TMPDIR:-/tmp}/gpu-check.log"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; LOG="$OUT/gpu-check.log"; fi
: >"$LOG"
say() { echo "gpu-check: $*" | tee -a "$LOG"; }

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/nvcc" ] && PATH="$d:$PATH" && break; done
fi
command -v nvcc >/dev/null 2>&1 || { say "nvcc not found"; exit 2; }
command -v cmake >/dev/null 2>&1 || { say "cmake not found"; exit 2; }
# compute-sanitizer and ncu ship beside nvcc in the toolkit, which need not be on PATH when nvcc is (a symlink
# elsewhere): the path of tool $1, or nothing.
cuda_tool() {
  command -v "$1" 2>/dev/null && return
  local nvcc_dir c
  nvcc_dir=$(dirname "$(readlink -f "$(command -v nvcc)")")
  for c in "$nvcc_dir/$1" "$nvcc_dir/../$1/$1" /usr/local/cuda/bin/"$1" /usr/local/cuda-*/bin/"$1"; do
    [ -x "$c" ] && echo "$c" && return
  done
}
SANITIZER=$(cuda_tool compute-sanitizer)

ARCHS="${GPU_CHECK_ARCHS:-}"
if [ -z "$ARCHS" ] && command -v nvidia-smi >/dev/null 2>&1; then
  CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  [ -n "$CC" ] && ARCHS="${CC}-real"
fi
ARCHS="${ARCHS:-75;80-real;86-real;89-real;90-real;100-real;120}"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv 2>&1 | tee -a "$LOG"
else
  say "nvidia-smi not found"
fi
say "nvcc $(nvcc --version | tail -1); CUDA architectures: $ARCHS"

GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
JOBS=$(nproc 2>/dev/null || echo 4)
MODE="${GPU_CHECK_MODE:-all}"
END="${GPU_CHECK_END:-530}"  # the peer and checks modes' last mark, for a second call in a lease's remaining minutes
elapsed() { echo $(( $(date +%s) - START )); }

# llama.cpp's build (the longest part of the peer's preparation) starts beside ours: at the lowest priority, so that
# ours and the GPU runs go first; the GGUF waits for peer-gguf ($BUILT appears when our build is done). Paused while
# the sanitizers and Nsight Compute run; stopped at the 530 s mark, what it built kept for a GPU_CHECK_MODE=peer call.
BUILT="$BUILD/.gpu-check-built"
rm -f "$BUILT"
PEER_PID=""
if [ "$MODE" = all ] && [ "${GPU_CHECK_PEER:-1}" = 1 ] && command -v setsid >/dev/null 2>&1; then
  PJOBS=$(( JOBS > 4 ? JOBS - 2 : 1 ))
  setsid nice -n 19 env ARCHS="$ARCHS" PEER_PREPARE_ONLY=1 PEER_JOBS="$PJOBS" PEER_AFTER="$BUILT" \
    OUT="${OUT:-${TMPDIR:-/tmp}}" scripts/gpu-peer.sh "$BUILD" $(( 530 - $(elapsed) )) >/dev/null 2>&1 &
  PEER_PID=$!
  say "preparing the peer in the background ($PJOBS jobs at nice 19; log: gpu-peer.log)"
fi
peer_signal() { [ -n "$PEER_PID" ] && kill -"$1" -- -"$PEER_PID" 2>/dev/null; }
# Whether the preparation still runs; once it has ended, PEER_RC holds its exit status (0: llama.cpp built and the
# GGUF written, by this call or one before it on this machine).
PEER_RC=""
peer_running() {
  [ -n "$PEER_RC" ] && return 1
  kill -0 "$PEER_PID" 2>/dev/null && return 0
  wait "$PEER_PID"
  PEER_RC=$?
  return 1
}
peer_ready() { ! peer_running && [ "$PEER_RC" = 0 ]; }

if ! timeout 240 cmake -S native -B "$BUILD" ${GEN[@]+"${GEN[@]}"} -DRT_CUDA=ON -DRT_ADDON=OFF -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_CUDA_ARCHITECTURES=$ARCHS" >>"$LOG" 2>&1; then
  say "cmake configure failed (see $LOG)"; tail -30 "$LOG"; peer_signal TERM; exit 3
fi
# Only what runs here: the CPU tests and the simulator builds cannot fail this check or spend its minutes.
timeout -k 10 "${GPU_CHECK_BUILD_TIMEOUT:-300}" cmake --build "$BUILD" --parallel "$JOBS" \
  --target test-gpu-ops test-gpu-model bench-gpu peer-gguf >>"$LOG" 2>&1
BUILD_RC=$?
if [ "$BUILD_RC" != "0" ] || [ ! -x "$BUILD/bench-gpu" ]; then
  say "build failed (see $LOG)"; tail -40 "$LOG"; peer_signal TERM; exit 3
fi
touch "$BUILT"
say "built in $(elapsed) s"

# The peer comparison alone, with its own two runs of ours around the peer's.
if [ "$MODE" = peer ]; then
  ARCHS="$ARCHS" scripts/gpu-peer.sh "$BUILD" $(( END - $(elapsed) ))
  PEER_RC=$?
  say "peer run exit code $PEER_RC; total $(elapsed) s"
  exit "$PEER_RC"
fi

# Step 4: each sanitizer runs only when it can finish before the mark $1; one not run says so and counts as not
# passed. Nsight Compute after them, informational.
SAN_RC=0
run_checks() {
  local end="$1" tool LEFT RC NCU KERNELS
  if [ -n "$SANITIZER" ] && [ -x "$BUILD/test-gpu-ops" ]; then
    for tool in memcheck racecheck synccheck; do
      LEFT=$(( end - $(elapsed) ))
      if [ "$LEFT" -lt 30 ]; then
        say "compute-sanitizer $tool: not run (no time left; GPU_CHECK_MODE=checks runs it)"; SAN_RC=1; continue
      fi
      timeout -k 10 "$LEFT" "$SANITIZER" --tool "$tool" --error-exitcode 9 "$BUILD/test-gpu-ops" >>"$LOG" 2>&1
      RC=$?
      say "compute-sanitizer $tool over test-gpu-ops: exit code $RC$([ "$RC" = 9 ] && echo ' (errors reported; see the log)')"
      [ "$RC" = "0" ] || SAN_RC=1
    done
    # Reads of device memory that nothing wrote, which neither the simulator's ASan builds nor memcheck report:
    # informational (a kernel may read a padded tail it then masks), so it never fails the check.
    LEFT=$(( end - $(elapsed) ))
    if [ "$LEFT" -ge 30 ]; then
      timeout -k 10 "$LEFT" "$SANITIZER" --tool initcheck --error-exitcode 9 "$BUILD/test-gpu-ops" >>"$LOG" 2>&1
      RC=$?
      say "compute-sanitizer initcheck over test-gpu-ops (informational): exit code $RC$([ "$RC" = 9 ] && echo ' (uninitialised reads reported; see the log)')"
    else
      say "compute-sanitizer initcheck: not run (no time left)"
    fi
  else
    say "compute-sanitizer: not found, not run"; SAN_RC=1
  fi
  # Where a batch-1 decode step's time goes, kernel by kernel (informational: it never fails the check). bench-gpu
  # marks the timed batch-1 decode steps under full residency as the profiler's range (cudaProfilerStart/Stop); the
  # 400 launches profiled are about four of those steps (99 kernels each for OLMoE).
  NCU=$(cuda_tool ncu)
  LEFT=$(( end - $(elapsed) ))
  if [ -n "$NCU" ] && [ "$LEFT" -ge 60 ]; then
    KERNELS="${OUT:-${TMPDIR:-/tmp}}/gpu-kernels.txt"
    timeout -k 10 $(( LEFT < 150 ? LEFT : 150 )) "$NCU" --clock-control none --metrics gpu__time_duration.sum \
      --profile-from-start off --launch-count 400 --print-summary per-kernel "$BUILD/bench-gpu" --quick --full-only \
      --no-kernel-table >"$KERNELS.raw" 2>&1
    grep -v '^==PROF==' "$KERNELS.raw" | grep -E 'Invocations|gpu__time_duration' | paste - - |
      sed -E 's/Device [0-9]+, CC [0-9.]+, //; s/\([^()]*_args[^()]*\)//; s/\(const [^()]*\)//; s/gpu__time_duration.sum +//; s/ +/ /g' \
      >"$KERNELS"
    # A summary this filter cannot read (another ncu's layout, an error) is kept whole instead, as the profile it is.
    if grep -q 'Invocations' "$KERNELS"; then
      rm -f "$KERNELS.raw"
      say "batch-1 decode kernels by ncu (name, grid x block, launches; min max avg): $KERNELS"
      tee -a "$LOG" <"$KERNELS"
    else
      mv "$KERNELS.raw" "$KERNELS"
      say "ncu's summary was not in the layout expected; kept as it printed it: $KERNELS"
      tail -20 "$KERNELS" | tee -a "$LOG"
    fi
  else
    say "ncu: $([ -z "$NCU" ] && echo 'not found' || echo 'no time left'), kernel times not taken"
  fi
}

if [ "$MODE" = checks ]; then
  run_checks "$END"
  say "total $(elapsed) s"
  [ "$SAN_RC" = "0" ]
  exit
fi

TEST_RC=0
# --timeout: ctest ends a hung test itself (killing ctest alone would leave the test holding the GPU).
timeout -k 10 180 ctest --test-dir "$BUILD" -L gpu --timeout 150 --output-on-failure -V 2>&1 | tee -a "$LOG"
TEST_RC=${PIPESTATUS[0]}
say "ctest -L gpu exit code $TEST_RC"
# Without a usable device (no GPU visible, a driver older than the toolkit) the tests skip and exit 0: not a pass here.
if grep -q "SKIP: no CUDA device" "$LOG"; then
  say "the gpu tests were skipped: $(grep -m1 -o 'SKIP: no CUDA device.*' "$LOG")"; TEST_RC=1
fi

BENCH_ARGS=(--partial-slots "${GPU_CHECK_PARTIAL_SLOTS:-16}")
[ "${GPU_CHECK_QUICK:-0}" = "1" ] && BENCH_ARGS+=(--quick)
JSON="${OUT:-${TMPDIR:-/tmp}}/gpu-check.json"
BENCH_ARGS+=(--json "$JSON")
rm -f "$JSON"
# The IFEval-shaped workload needs IFEval's prompts: ../shared's copy, or one carried to the device machine in the
# ignored .cache/ifeval/ (the device machine gets the working tree, not ../shared).
IFEVAL_INPUT=""
for f in ../shared/ifeval/input_data.jsonl .cache/ifeval/input_data.jsonl; do [ -f "$f" ] && IFEVAL_INPUT="$f" && break; done
if [ -n "$IFEVAL_INPUT" ]; then BENCH_ARGS+=(--ifeval "$IFEVAL_INPUT" --ifeval-max-s "${GPU_CHECK_IFEVAL_MAX_S:-120}"); else say "no input_data.jsonl: the IFEval-shaped workload is skipped"; fi
# The peer comparison after the benchmark takes about two minutes (our second run, the peer's three), so the
# benchmark ends earlier when the peer is being prepared.
PEER_COMING=0
[ -n "$PEER_PID" ] && { peer_running || peer_ready; } && PEER_COMING=1
REMAIN=$(( $([ "$PEER_COMING" = 1 ] && echo 370 || echo 400) - $(elapsed) ))
[ "$REMAIN" -lt 60 ] && REMAIN=60
# The bench fits its last part (the IFEval-shaped workload) into this, so that it writes its figures before the timeout.
BENCH_ARGS+=(--deadline-s $(( REMAIN - 10 )))
timeout -k 10 "$REMAIN" "$BUILD/bench-gpu" "${BENCH_ARGS[@]}" 2>&1 | tee -a "$LOG"
BENCH_RC=${PIPESTATUS[0]}
grep -q "^skipped: " "$LOG" && BENCH_RC=1
say "benchmark exit code $BENCH_RC; $(elapsed) s so far"

# Step 3: the peer, when its preparation ends by the 420 s mark (the comparison needs about 100 s before 530).
if [ -n "$PEER_PID" ]; then
  while [ -f "$JSON" ] && peer_running && [ "$(elapsed)" -lt 420 ]; do sleep 2; done
  if peer_ready && [ -f "$JSON" ]; then
    say "peer prepared at $(elapsed) s: the comparison (ours above, the peer, ours again)"
    ARCHS="$ARCHS" PEER_OURS_FIRST="$JSON" scripts/gpu-peer.sh "$BUILD" $(( 525 - $(elapsed) )) >>"$LOG" 2>&1
    PEER_JSON="${OUT:-${TMPDIR:-/tmp}}/gpu-check-peer.json"
    if [ -f "$PEER_JSON" ]; then
      tee -a "$LOG" <"$PEER_JSON"
      # Under "peer" in gpu-check.json as well: its closing brace is its last line.
      { sed '$d' "$JSON"; echo ','; printf '  "peer": '; sed 's/^/  /; 1s/^  //' "$PEER_JSON"; echo '}'; } >"$JSON.tmp" &&
        mv "$JSON.tmp" "$JSON"
    else
      say "the peer comparison wrote no figures (see gpu-peer.log)"
    fi
  elif [ ! -f "$JSON" ]; then
    say "no benchmark figures, so no peer comparison"
  elif peer_running; then
    say "peer not prepared by $(elapsed) s: GPU_CHECK_MODE=peer on this machine goes on from there (see gpu-peer.log)"
  else
    say "the peer's preparation stopped short (see gpu-peer.log)"
  fi
fi

peer_signal STOP
run_checks 530
peer_signal CONT
if [ -n "$PEER_PID" ] && peer_running; then
  LEFT=$(( 530 - $(elapsed) ))
  [ "$LEFT" -gt 0 ] && timeout "$LEFT" tail --pid="$PEER_PID" -f /dev/null
  peer_running && peer_signal TERM
  if peer_ready; then say "peer prepared: GPU_CHECK_MODE=peer on this machine runs the comparison"
  else say "peer not fully prepared (what it built is kept): GPU_CHECK_MODE=peer on this machine goes on from there"; fi
fi
say "total $(elapsed) s"
[ "$TEST_RC" = "0" ] && [ "$BENCH_RC" = "0" ] && [ "$SAN_RC" = "0" ]
