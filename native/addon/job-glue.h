#pragma once
// What the addon's long jobs (generate, pack) share: reading options, the job thread and its thread-safe function,
// events from that thread to JS, and the { promise, cancel() } handle they return.
#include <napi.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "rt/rt-runtime.h"

namespace horizon_addon {

inline std::string get_string(const Napi::Object & o, const char * key, const std::string & def) {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : def;
}

// An optional integer option in [lo, hi]; anything else (NaN, Infinity, a fraction, out of range) is a RangeError
// naming it, never a silently converted value.
inline int64_t get_int(Napi::Env env, const Napi::Object & o, const char * what, const char * key, int64_t def,
                       int64_t lo, int64_t hi) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return def;
  const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : std::nan("");
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    throw Napi::RangeError::New(env, std::string(what) + ": " + key + " must be an integer from " + std::to_string(lo) +
                                         " to " + std::to_string(hi));
  }
  return static_cast<int64_t>(d);
}

inline constexpr int64_t INT_MAX_OPT = std::numeric_limits<int32_t>::max();

// A JS array holding the elements of v (numbers or strings).
template <typename T>
Napi::Array to_array(Napi::Env env, const std::vector<T> & v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); ++i) a.Set(static_cast<uint32_t>(i), v[i]);
  return a;
}

// One event from a worker thread to JS: a token, a progress report, or the end of the request.
struct job_event {
  enum class kind { token, progress, done } type = kind::token;
  int index = 0;
  int32_t token = 0;
  double done_bytes = 0, total_bytes = 0;
  std::unique_ptr<rt::generate_result> end;  // a token event that ends its prompt: the prompt's result
  std::string file;                          // a progress event that reports a finished output file: its name
};

// Runs `work` on its own thread, which reports through `tsfn`. The thread-safe function's finalizer (after the
// thread's release, or when the Node environment is torn down, a worker thread terminated) cancels and joins it, so
// the thread never calls into a thread-safe function that Node has freed.
template <typename Job, typename Work>
void start_job(Napi::Env env, const std::shared_ptr<Job> & job, Napi::Function cb, const char * name, Work work) {
  job->tsfn = Napi::ThreadSafeFunction::New(env, cb, name, 0, 1, [job](Napi::Env) {
    job->cancel->store(true);
    if (job->thread.joinable() && job->thread.get_id() != std::this_thread::get_id()) job->thread.join();
  });
  try {
    job->thread = std::thread([job, work] {
      work();
      job->tsfn.Release();
    });
  } catch (const std::system_error & e) {
    // No thread (the process or container is at its thread limit). Nothing else would release the function, which
    // would keep the event loop alive forever, and the C++ exception would end the process: a JS error instead.
    job->tsfn.Release();
    throw Napi::Error::New(env, std::string("cannot start a native thread for ") + name + ": " + e.what());
  }
}

// Queues `ev` to JS; when Node is closing the function (the environment going away) the event is dropped and the
// job cancelled.
template <typename Job, typename Callback>
void post(Job & job, job_event * ev, Callback callback) {
  if (job.tsfn.BlockingCall(ev, callback) != napi_ok) {
    delete ev;
    job.cancel->store(true);
  }
}

// Runs a runtime call on a job thread: an exception escaping it (out of memory, a filesystem error) would end the
// process, so it becomes the job's error.
template <typename Fn>
bool guarded(rt::rt_error & error, Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc & e) {
    error = rt::rt_error{rt::rt_status::out_of_memory, -1, e.what()};
  } catch (const std::exception & e) {
    error = rt::rt_error{rt::rt_status::internal, -1, e.what()};
  } catch (...) {
    error = rt::rt_error{rt::rt_status::internal, -1, "unknown native exception"};
  }
  return false;
}

// The JS form of a runtime error: an Error whose `code` is the status's name ("invalid_prompt", ...) and, when one
// prompt failed, `promptIndex` its position, so callers act on them without reading the message.
inline Napi::Error to_js_error(Napi::Env env, const rt::rt_error & e) {
  Napi::Error error = Napi::Error::New(env, e.message);
  error.Set("code", Napi::String::New(env, rt::rt_status_name(e.code)));
  if (e.prompt_index >= 0) error.Set("promptIndex", Napi::Number::New(env, e.prompt_index));
  return error;
}

inline Napi::Function noop(Napi::Env env) {
  return Napi::Function::New(env, [](const Napi::CallbackInfo & ci) { return ci.Env().Undefined(); });
}

// What generate and pack hand back to JS: { promise, cancel() }.
inline Napi::Object job_handle(Napi::Env env, Napi::Promise promise, std::shared_ptr<std::atomic<bool>> cancel) {
  Napi::Object handle = Napi::Object::New(env);
  handle.Set("promise", promise);
  handle.Set("cancel", Napi::Function::New(env, [cancel](const Napi::CallbackInfo & c) {
    cancel->store(true);
    return c.Env().Undefined();
  }));
  return handle;
}

}  // namespace horizon_addon
