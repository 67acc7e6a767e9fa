# What the demo-perplexity checks share (check_quant_ppl, check_gptq_ppl, check_kv_ppl): run
# rad-ppl, read its perplexity, and compare two perplexities in whole units of 1e-4 (CMake has no
# floating point).

# rad_ppl(OUT_VAR ARGS...): rad-ppl ARGS..., its perplexity in OUT_VAR; a failed run or no
# perplexity in its output is a fatal error naming ARGS.
function(rad_ppl out_var)
  execute_process(COMMAND ${RAD_PPL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "rad-ppl ${ARGN} failed: ${err}")
  endif()
  string(REGEX MATCH "ppl ([0-9]+\\.[0-9]+)" _ "${out}")
  if(CMAKE_MATCH_1 STREQUAL "")
    message(FATAL_ERROR "rad-ppl ${ARGN} printed no perplexity: ${out}")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# A decimal string as an integer count of 1e-4.
function(to_units str out_var)
  if(NOT str MATCHES "^([0-9]+)\\.([0-9]*)")
    message(FATAL_ERROR "not a decimal number: ${str}")
  endif()
  string(SUBSTRING "${CMAKE_MATCH_2}0000" 0 4 f)
  math(EXPR u "${CMAKE_MATCH_1} * 10000 + 1${f} - 10000")  # the leading 1 keeps zeros decimal
  set(${out_var} ${u} PARENT_SCOPE)
endfunction()

# expect_within(WHAT OURS REF MAX_REL): |OURS - REF| <= REF * MAX_REL, else a fatal error naming
# WHAT; the comparison is printed either way.
function(expect_within what ours ref max_rel)
  to_units("${ours}" ou)
  to_units("${ref}" rf)
  to_units("${max_rel}" lim)  # the bound as a fraction, in units of 1e-4
  math(EXPR diff "${ou} - ${rf}")
  if(diff LESS 0)
    math(EXPR diff "0 - ${diff}")
  endif()
  math(EXPR allowed "${rf} * ${lim} / 10000")
  message("${what}: rad-ppl ${ours} vs ${ref} (|diff| ${diff} / ${allowed} allowed, in units of 1e-4)")
  if(diff GREATER allowed)
    message(FATAL_ERROR "${what}: the perplexity ${ours} is more than ${max_rel} (relative) from ${ref}")
  endif()
endfunction()
