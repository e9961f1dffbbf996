// json_int.h — whether a JSON value may be read as an integer of type T. nlohmann's get<T>() for
// an integral T casts whatever number it finds: a float (8.9e61 as an int is undefined
// behaviour, found by fuzz_results_line) or an integer out of T's range. Every integer this
// project reads from a file it did not write itself is checked here first: JSON integers within
// T's range pass, anything else (floats included, as the writers never write one) does not.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace dpscale {

template <class T>
bool json_integer_fits(const nlohmann::json& x) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (x.is_number_unsigned()) return x.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  if (!x.is_number_integer()) return false;
  const int64_t v = x.get<int64_t>();
  if constexpr (std::is_signed_v<T>) {
    return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) && v <= static_cast<int64_t>(std::numeric_limits<T>::max());
  } else {
    return v >= 0;
  }
}

// True for an array whose every element fits T.
template <class T>
bool json_integers_fit(const nlohmann::json& x) {
  if (!x.is_array()) return false;
  for (const nlohmann::json& e : x) {
    if (!json_integer_fits<T>(e)) return false;
  }
  return true;
}

// Field `key` of object `obj` as T, integers checked as above. Throws std::runtime_error naming
// it as `parent.key`: "'point' has no field 'model'", "'point.world_size' has the wrong type".
template <class T>
T json_field(const nlohmann::json& obj, const std::string& parent, const std::string& key) {
  if (!obj.contains(key)) throw std::runtime_error("'" + parent + "' has no field '" + key + "'");
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!json_integer_fits<T>(obj.at(key))) {
      throw std::runtime_error("'" + parent + "." + key + "' has the wrong type (want an integer in range)");
    }
  }
  try {
    return obj.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("'" + parent + "." + key + "' has the wrong type");
  }
}

}  // namespace dpscale
