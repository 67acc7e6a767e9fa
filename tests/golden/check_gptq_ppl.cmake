# ctest: the demo model converted by the int4-gptq preset (GPTQ's codes, calibrated on CALIB, text
# that is not heldout.txt) scores a lower perplexity on models/demo/heldout.txt than the int4 preset
# (rtn, the same encoding: zero point, f16 scale per 128 columns) and stays within MAX_REL of the
# unquantised model's (ppl_reference.json), on libcpu.
#   -DRAD_CONVERT= -DRAD_PPL= -DMODEL=models/demo -DCALIB=text -DCALIB_TOKENS=8192 -DMAX_REL=0.12 -DOUT=dir
#
# Measured (20000 tokens, libcpu, the 2-core build VM; calibrated on the first 8192 tokens of
# moby-dick.txt, which end long before the held-out chapters 130 on): int4 rtn 106.3828, int4-gptq
# 106.1324, bf16 106.0649: GPTQ keeps 79% less of rtn's loss. The test takes 45-60 s (the
# calibration run and GPTQ's 24 factors about 20 s of it, two rad-ppl runs about 13 s each).
# Mutations (made in libquant/gptq.cpp, watched, undone): no error propagation (the codes are then
# rtn's) fails it: 106.3828, not below int4's. Not caught here, both caught by quant_tests [gptq]:
# the error divided by U[j][j]^2 instead of U[j][j] (106.1865, still below rtn), and a group's scale
# from the incoming values instead of the moved ones (106.0622: on this model the difference is
# within the noise of a 14M-parameter perplexity; on quant_tests' correlated layer it is 8% of the
# output error).
foreach(v RAD_CONVERT RAD_PPL MODEL CALIB CALIB_TOKENS MAX_REL OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_gptq_ppl.cmake needs -D${v}=")
  endif()
endforeach()
if(NOT EXISTS ${CALIB})
  message(FATAL_ERROR "the calibration text ${CALIB} is missing")
endif()
file(MAKE_DIRECTORY ${OUT})

include(${CMAKE_CURRENT_LIST_DIR}/ppl_common.cmake)
function(ppl_of preset extra out_var)
  set(rad ${OUT}/demo_${preset}.rad)
  execute_process(COMMAND ${RAD_CONVERT} ${MODEL} -o ${rad} --recipe ${preset} ${extra} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "rad-convert --recipe ${preset} failed: ${err}")
  endif()
  rad_ppl(p ${rad} ${MODEL}/heldout.txt --kernels libcpu)
  file(REMOVE ${rad})
  set(${out_var} ${p} PARENT_SCOPE)
endfunction()

ppl_of(int4 "" rtn)
ppl_of(int4-gptq "--calib;${CALIB};--calib-tokens;${CALIB_TOKENS}" gptq)
file(READ ${MODEL}/ppl_reference.json ref_json)
string(JSON ref GET "${ref_json}" ppl)
to_units("${rtn}" ru)
to_units("${gptq}" gu)
message("int4-gptq: rad-ppl ${gptq}, int4 (rtn) ${rtn}")
if(NOT gu LESS ru)
  message(FATAL_ERROR "the int4-gptq container's perplexity ${gptq} is not below the int4 (rtn) container's ${rtn}")
endif()
expect_within("int4-gptq against the unquantised model" "${gptq}" "${ref}" "${MAX_REL}")
