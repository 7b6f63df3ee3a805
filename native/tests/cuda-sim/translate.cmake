# Rewrites a CUDA source for the simulator (cuda-sim.h): kernel launches become calls, dynamic shared memory a pointer,
# and each kernel body starts with ::rt_sim::kernel_prologue(<its __launch_bounds__, or 0>), through which a launch
# learns the bound a GPU would enforce.
# Usage: cmake -DIN=<file.cu> -DOUT=<file.cpp> -P translate.cmake
file(READ "${IN}" text)
string(REGEX REPLACE "([A-Za-z_][A-Za-z0-9_]*(<[^<>;]*>)?)<<<([^>]*)>>>\\(" "::rt_sim::launch(\\3).run(\"\\1\", \\1, "
       text "${text}")
string(REGEX REPLACE "extern __shared__ ([A-Za-z0-9_]+) ([A-Za-z0-9_]+)\\[\\];"
       "\\1 * \\2 = static_cast<\\1 *>(::rt_sim::dynamic_shared());" text "${text}")
string(REGEX REPLACE "__global__ void[ \t\r\n]+__launch_bounds__\\(([^()]*)\\)([^;{]*)\\{"
       "void\\2{ if (::rt_sim::kernel_prologue(\\1)) return;" text "${text}")
string(REGEX REPLACE "__global__ void([^;{]*)\\{" "void\\1{ if (::rt_sim::kernel_prologue(0)) return;" text "${text}")
# A kernel left without its prologue would run its whole body on the host when a launch probes it; one whose bound
# the first pattern did not read would go unchecked.
if(text MATCHES "<<<|extern __shared__|__global__|void[ \t\r\n]+__launch_bounds__")
  message(FATAL_ERROR "${IN}: a kernel launch, kernel or shared declaration the simulator cannot rewrite")
endif()
file(WRITE "${OUT}.tmp" "#line 1 \"${IN}\"\n${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
