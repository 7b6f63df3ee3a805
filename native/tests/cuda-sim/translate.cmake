# Rewrites a CUDA source for the simulator (cuda-sim.h): kernel launches become calls, dynamic shared memory a pointer.
# Usage: cmake -DIN=<file.cu> -DOUT=<file.cpp> -P translate.cmake
file(READ "${IN}" text)
string(REGEX REPLACE "([A-Za-z_][A-Za-z0-9_]*(<[^<>;]*>)?)<<<([^>]*)>>>\\(" "::rt_sim::launch(\\3).run(\"\\1\", \\1, "
       text "${text}")
string(REGEX REPLACE "extern __shared__ ([A-Za-z0-9_]+) ([A-Za-z0-9_]+)\\[\\];"
       "\\1 * \\2 = static_cast<\\1 *>(::rt_sim::dynamic_shared());" text "${text}")
if(text MATCHES "<<<|extern __shared__")
  message(FATAL_ERROR "${IN}: a kernel launch or shared declaration the simulator cannot rewrite")
endif()
file(WRITE "${OUT}.tmp" "#line 1 \"${IN}\"\n${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
