# library_edges.cmake: the link edges and include paths of the libraries that CMakeLists.txt
# builds, as CTest library_edges reads them from the build (cmake -P; each list is joined
# with "|"). The engine names neither libyaml nor libxxhash, cannot include the loader and
# keeps struct pn_engine to itself; libyaml is pn_scenario's alone, and PRIVATE: what links
# pn_scenario links libyaml (a static library's PRIVATE dependency stays in its interface as
# $<LINK_ONLY:...>) but gets none of its usage requirements.
function(refuse what list needle)
  string(FIND "${list}" "${needle}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${what} has ${needle}: ${list}")
  endif()
endfunction()
function(require what list needle)
  string(FIND "${list}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what} lacks ${needle}: ${list}")
  endif()
endfunction()

foreach(v SCENARIO_INTERFACE SIM_INTERFACE MODEL_INTERFACE)
  string(REGEX REPLACE "\\$<LINK_ONLY:[^>]*>" "" ${v} "${${v}}")
endforeach()

refuse("pn_engine's links" "${ENGINE_LINKS}" "YAML")
refuse("pn_engine's links" "${ENGINE_LINKS}" "XXHASH")
refuse("pn_engine's include path" "${ENGINE_INCLUDES}" "src/scenario")
# the protocols are above the engine: it reaches them only through the rows it is given
refuse("pn_engine's include path" "${ENGINE_INCLUDES}" "src/protocol")
refuse("pn_engine's links" "${ENGINE_LINKS}" "pn_protocol")
# struct pn_engine is complete inside the library only (engine.h): the definition that
# completes it is PRIVATE, so a field read in sim/, disk/, model/ or cli/ does not compile.
require("pn_engine's definitions" "${ENGINE_DEFS}" "PN_ENGINE_INTERNAL")
refuse("pn_engine's interface definitions" "${ENGINE_INTERFACE_DEFS}" "PN_ENGINE_INTERNAL")
# a protocol row reaches the engine through its context's handles (engine/protocol.h), never
# struct pn_engine: pn_protocol does not complete it
refuse("pn_protocol's definitions" "${PROTOCOL_DEFS}" "PN_ENGINE_INTERNAL")
require("pn_scenario's links" "${SCENARIO_LINKS}" "YAML")
refuse("pn_scenario's interface" "${SCENARIO_INTERFACE}" "YAML")
refuse("pn_sim's interface" "${SIM_INTERFACE}" "XXHASH")
refuse("pn_model's interface" "${MODEL_INTERFACE}" "XXHASH")
message(STATUS "library edges: pn_engine links ${ENGINE_LINKS}; pn_scenario ${SCENARIO_LINKS}")
