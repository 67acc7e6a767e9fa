// status_name.h: a plugin call's RadStatus as its name, for errors that say which refusal came
// back (the engine's launches, the converter's quantisers).
#pragma once
#include <radiance/rad_plugin.h>

#include <string>

namespace radiance::core {

inline std::string status_name(int rc) {
    switch (rc) {
    case RAD_E_UNSUPPORTED: return "RAD_E_UNSUPPORTED";
    case RAD_E_DTYPE: return "RAD_E_DTYPE";
    case RAD_E_SHAPE: return "RAD_E_SHAPE";
    case RAD_E_ARG: return "RAD_E_ARG";
    case RAD_E_NOMEM: return "RAD_E_NOMEM";
    default: return "status " + std::to_string(rc);
    }
}

}  // namespace radiance::core
