# ctest: a quantised container served over two tensor-parallel ranks gives what one rank gives.
#   -DRAD_CONVERT= -DRAD_GOLDEN= -DFIXTURE=dir -DRECIPE=file -DOUT=dir
# The fixture converted by RECIPE, then rad-golden --model at --tp 1 and --tp 2 (libref): every
# relative error against the float golden and every greedy sequence it prints must be the same.
# (Against the golden itself the quantised model is far off, so rad-golden's own verdict fails by
# design; what is compared is the two runs.) Under two ranks each plane of a quantised weight is
# sliced by the weight's spans: the stacked row parts of attn_qkv / ffn_gate_up (phi3's fused ones
# included), the column halves of attn_output / ffn_down with their groups' scales. A recipe whose
# groups a rank's half does not start on is refused by name (gemma3's and llama's ffn_down: 80 of
# 160 columns, hence groups of 16 there).
#
# Mutations each failed all five (made, watched fail, undone): the engine's slice_plane copying a
# row-split plane's rows from the plane's start whatever the rank's span; slice_plane splitting a
# plane's rows as one part, ignoring the weight's row parts (q|k|v, gate|up).
get_filename_component(name ${FIXTURE} NAME)
set(rad ${OUT}/${name}_quant.rad)
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${RAD_CONVERT} ${FIXTURE} -o ${rad} --recipe ${RECIPE} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rad-convert ${FIXTURE} --recipe ${RECIPE} failed: ${err}")
endif()
foreach(tp 1 2)
  execute_process(COMMAND ${RAD_GOLDEN} ${FIXTURE} --model ${rad} --tp ${tp} --kernels libref --tol 10 OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  string(REGEX MATCHALL "rel_err=[0-9.e+-]+|got \\[[0-9 ]*\\]" found "${out}")
  if(found STREQUAL "")
    file(REMOVE ${rad})
    message(FATAL_ERROR "rad-golden --tp ${tp} printed no result:\n${out}\n${err}")
  endif()
  set(tp${tp} "${found}")
endforeach()
file(REMOVE ${rad})
if(NOT tp1 STREQUAL tp2)
  message(FATAL_ERROR "--tp 2 differs from --tp 1 on the quantised ${name}:\n  tp 1: ${tp1}\n  tp 2: ${tp2}")
endif()
list(LENGTH tp1 n)
message(STATUS "${name}: ${n} results the same at --tp 1 and --tp 2")
