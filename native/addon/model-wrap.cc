// Node glue for rt-runtime.h: loadModel, the model handle (info, logits, generate, close) and pack. Long work runs
// off the JS thread; tokens, progress and the final result travel through one thread-safe function per request,
// so the result always arrives after the last token.
#include "model-wrap.h"

#include <algorithm>
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

namespace {

// The model handle's constructor, per Node environment (the main thread and each worker thread have their own).
Napi::FunctionReference & model_ctor(Napi::Env env) { return *env.GetInstanceData<Napi::FunctionReference>(); }

std::string get_string(const Napi::Object & o, const char * key, const std::string & def) {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : def;
}

// An optional integer option in [lo, hi]; anything else (NaN, Infinity, a fraction, out of range) is a RangeError
// naming it, never a silently converted value.
int64_t get_int(Napi::Env env, const Napi::Object & o, const char * what, const char * key, int64_t def, int64_t lo,
                int64_t hi) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return def;
  const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : std::nan("");
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    throw Napi::RangeError::New(env, std::string(what) + ": " + key + " must be an integer from " + std::to_string(lo) +
                                         " to " + std::to_string(hi));
  }
  return static_cast<int64_t>(d);
}

constexpr int64_t INT_MAX_OPT = std::numeric_limits<int32_t>::max();

// A JS array holding the elements of v (numbers or strings).
template <typename T>
Napi::Array to_array(Napi::Env env, const std::vector<T> & v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); ++i) a.Set(static_cast<uint32_t>(i), v[i]);
  return a;
}

std::vector<int32_t> to_tokens(Napi::Env env, const Napi::Value & v, const char * what) {
  std::vector<int32_t> out;
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_int32_array) {
    Napi::Int32Array a = v.As<Napi::Int32Array>();
    out.assign(a.Data(), a.Data() + a.ElementLength());
  } else if (v.IsArray()) {
    Napi::Array a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value x = a.Get(i);
      const double d = x.IsNumber() ? x.As<Napi::Number>().DoubleValue() : std::nan("");
      if (!std::isfinite(d) || d != std::floor(d) || d < std::numeric_limits<int32_t>::min() ||
          d > std::numeric_limits<int32_t>::max()) {
        throw Napi::TypeError::New(env, std::string(what) + " must hold 32-bit integers");
      }
      out.push_back(static_cast<int32_t>(d));
    }
  } else {
    throw Napi::TypeError::New(env, std::string(what) + " must be an array of token ids or an Int32Array");
  }
  return out;
}

class model_wrap : public Napi::ObjectWrap<model_wrap> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "NativeModelHandle",
                       {InstanceMethod("info", &model_wrap::info), InstanceMethod("logits", &model_wrap::logits),
                        InstanceMethod("generate", &model_wrap::generate), InstanceMethod("close", &model_wrap::close)});
  }
  explicit model_wrap(const Napi::CallbackInfo & info) : Napi::ObjectWrap<model_wrap>(info) {}
  std::shared_ptr<rt::model> model;

 private:
  std::shared_ptr<rt::model> need(Napi::Env env) {
    if (!model) throw Napi::Error::New(env, "the model is closed");
    return model;
  }

  Napi::Value info(const Napi::CallbackInfo & ci) {
    Napi::Env env = ci.Env();
    rt::model_info i = rt::rt_model_info(*need(env));
    Napi::Object o = Napi::Object::New(env);
    o.Set("backend", i.backend);
    o.Set("weights", i.weights);
    o.Set("dir", i.dir);
    o.Set("groupSize", i.group_size);
    o.Set("hiddenSize", i.hidden_size);
    o.Set("intermediateSize", i.intermediate_size);
    o.Set("numLayers", i.num_hidden_layers);
    o.Set("numHeads", i.num_attention_heads);
    o.Set("numKvHeads", i.num_key_value_heads);
    o.Set("headDim", i.head_dim);
    o.Set("numExperts", i.num_experts);
    o.Set("expertsPerToken", i.num_experts_per_tok);
    o.Set("vocabSize", i.vocab_size);
    o.Set("maxContext", i.max_context);
    o.Set("eosTokenIds", to_array(env, i.eos_token_ids));
    o.Set("weightBytes", static_cast<double>(i.weight_bytes));
    o.Set("threads", i.threads);
    o.Set("simd", i.simd);
    o.Set("cpuIsa", i.cpu_isa);
    o.Set("deviceExpertSlots", i.device_expert_slots);
    o.Set("fault", i.fault);
    o.Set("device", i.device);
    o.Set("deviceBytes", static_cast<double>(i.device_bytes));
    return o;
  }

  Napi::Value logits(const Napi::CallbackInfo & ci);
  Napi::Value generate(const Napi::CallbackInfo & ci);
  Napi::Value close(const Napi::CallbackInfo & ci) {
    // Running generations end "cancelled" at their next step and drop their reference to the model then, which
    // frees it; a logits call is one forward and finishes.
    for (const auto & c : generations_) {
      if (auto flag = c.lock()) flag->store(true);
    }
    generations_.clear();
    model.reset();
    return ci.Env().Undefined();
  }

  std::vector<std::weak_ptr<std::atomic<bool>>> generations_;  // cancel flags of this handle's generate calls
};

class load_worker : public Napi::AsyncWorker {
 public:
  load_worker(Napi::Env env, rt::model_load_options o) : Napi::AsyncWorker(env), opts_(std::move(o)), deferred_(env) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    std::string err;
    model_ = rt::rt_model_load(opts_, err);
    if (!model_) SetError(err);
  }
  void OnOK() override {
    Napi::Object obj = model_ctor(Env()).New({});
    model_wrap::Unwrap(obj)->model = model_;
    deferred_.Resolve(obj);
  }
  void OnError(const Napi::Error & e) override { deferred_.Reject(e.Value()); }

 private:
  rt::model_load_options opts_;
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<rt::model> model_;
};

class logits_worker : public Napi::AsyncWorker {
 public:
  logits_worker(Napi::Env env, std::shared_ptr<rt::model> m, std::vector<int32_t> t)
      : Napi::AsyncWorker(env), model_(std::move(m)), tokens_(std::move(t)), deferred_(env) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    std::string err;
    if (!rt::rt_model_logits(*model_, tokens_, out_, err)) SetError(err);
  }
  void OnOK() override {
    Napi::Env env = Env();
    Napi::Array arr = Napi::Array::New(env, out_.size());
    for (size_t i = 0; i < out_.size(); ++i) {
      Napi::Float32Array row = Napi::Float32Array::New(env, out_[i].size());
      std::copy(out_[i].begin(), out_[i].end(), row.Data());
      arr.Set(static_cast<uint32_t>(i), row);
    }
    deferred_.Resolve(arr);
  }
  void OnError(const Napi::Error & e) override { deferred_.Reject(e.Value()); }

 private:
  std::shared_ptr<rt::model> model_;
  std::vector<int32_t> tokens_;
  std::vector<std::vector<float>> out_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value model_wrap::logits(const Napi::CallbackInfo & ci) {
  Napi::Env env = ci.Env();
  auto m = need(env);
  auto * w = new logits_worker(env, m, to_tokens(env, ci[0], "tokens"));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

// One event from a worker thread to JS: a token, a progress report, or the end of the request.
struct job_event {
  enum class kind { token, progress, done } type = kind::token;
  int index = 0;
  int32_t token = 0;
  double done_bytes = 0, total_bytes = 0;
  std::unique_ptr<rt::generate_result> end;  // a token event that ends its prompt: the prompt's result
};

struct generate_job {
  std::shared_ptr<rt::model> model;
  rt::generate_request request;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  std::vector<rt::generate_result> results;
  rt::generate_stats stats;
  std::string error;
  bool ok = false;
  std::string callback_error;
  Napi::Promise::Deferred deferred;
  Napi::ThreadSafeFunction tsfn;
  std::thread thread;
  explicit generate_job(Napi::Env env) : deferred(env) {}
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
bool guarded(std::string & error, Fn fn) {
  try {
    return fn();
  } catch (const std::exception & e) {
    error = e.what();
  } catch (...) {
    error = "unknown native exception";
  }
  return false;
}

Napi::Object end_object(Napi::Env env, const rt::generate_result & r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("tokens", to_array(env, r.tokens));
  o.Set("promptTokens", r.prompt_tokens);
  o.Set("timeToFirstTokenMs", r.time_to_first_token_ms);
  o.Set("decodeTokensPerSecond", r.decode_tokens_per_s);
  o.Set("finishReason", r.finish_reason);
  return o;
}

Napi::Object result_object(Napi::Env env, const generate_job & job) {
  Napi::Object out = Napi::Object::New(env);
  Napi::Array results = Napi::Array::New(env, job.results.size());
  for (size_t i = 0; i < job.results.size(); ++i) results.Set(static_cast<uint32_t>(i), end_object(env, job.results[i]));
  out.Set("results", results);
  Napi::Object s = Napi::Object::New(env);
  s.Set("prefillMs", job.stats.prefill_ms);
  s.Set("decodeMs", job.stats.decode_ms);
  s.Set("prefillSteps", static_cast<double>(job.stats.prefill_steps));
  s.Set("decodeSteps", static_cast<double>(job.stats.decode_steps));
  s.Set("expertHits", static_cast<double>(job.stats.expert_hits));
  s.Set("expertMisses", static_cast<double>(job.stats.expert_misses));
  s.Set("h2dBytes", static_cast<double>(job.stats.h2d_bytes));
  s.Set("d2hBytes", static_cast<double>(job.stats.d2h_bytes));
  s.Set("peakMemoryBytes", static_cast<double>(job.stats.peak_memory_bytes));
  s.Set("peakMemoryScope", job.stats.peak_memory_scope);
  s.Set("expertEvictions", static_cast<double>(job.stats.expert_evictions));
  out.Set("stats", s);
  return out;
}

Napi::Function noop(Napi::Env env) {
  return Napi::Function::New(env, [](const Napi::CallbackInfo & ci) { return ci.Env().Undefined(); });
}

// What generate and pack hand back to JS: { promise, cancel() }.
Napi::Object job_handle(Napi::Env env, Napi::Promise promise, std::shared_ptr<std::atomic<bool>> cancel) {
  Napi::Object handle = Napi::Object::New(env);
  handle.Set("promise", promise);
  handle.Set("cancel", Napi::Function::New(env, [cancel](const Napi::CallbackInfo & c) {
    cancel->store(true);
    return c.Env().Undefined();
  }));
  return handle;
}

Napi::Value model_wrap::generate(const Napi::CallbackInfo & ci) {
  Napi::Env env = ci.Env();
  auto m = need(env);
  if (!ci[0].IsObject()) throw Napi::TypeError::New(env, "generate: the request must be an object");
  Napi::Object req = ci[0].As<Napi::Object>();
  auto job = std::make_shared<generate_job>(env);
  job->model = m;
  Napi::Value prompts = req.Get("prompts");
  if (!prompts.IsArray()) throw Napi::TypeError::New(env, "generate: request.prompts must be an array of token arrays");
  Napi::Array pa = prompts.As<Napi::Array>();
  for (uint32_t i = 0; i < pa.Length(); ++i) job->request.prompts.push_back(to_tokens(env, pa.Get(i), "request.prompts[i]"));
  job->request.max_new_tokens = static_cast<int>(get_int(env, req, "generate", "maxNewTokens", 256, 0, INT_MAX_OPT));
  job->request.prefill_token_budget =
      static_cast<int>(get_int(env, req, "generate", "prefillTokenBudget", 4096, 1, INT_MAX_OPT));
  job->request.max_active = static_cast<int>(get_int(env, req, "generate", "maxActive", 0, 0, INT_MAX_OPT));
  if (req.Get("startCancelled").ToBoolean().Value()) job->cancel->store(true);
  Napi::Value stops = req.Get("stopTokens");
  if (!stops.IsUndefined() && !stops.IsNull()) job->request.stop_tokens = to_tokens(env, stops, "request.stopTokens");
  Napi::Function cb = ci.Length() > 1 && ci[1].IsFunction() ? ci[1].As<Napi::Function>() : noop(env);
  start_job(env, job, cb, "horizon-generate", [job] {
    rt::token_callback on_token = [job](int index, int32_t token, const rt::generate_result * end) {
      auto * ev = new job_event{job_event::kind::token, index, token, 0, 0, nullptr};
      if (end != nullptr) ev->end = std::make_unique<rt::generate_result>(*end);
      post(*job, ev, [job](Napi::Env env, Napi::Function fn, job_event * e) {
        try {
          if (e->end) {
            fn.Call({Napi::Number::New(env, e->index), Napi::Number::New(env, e->token), end_object(env, *e->end)});
          } else {
            fn.Call({Napi::Number::New(env, e->index), Napi::Number::New(env, e->token)});
          }
        } catch (const Napi::Error & err) {
          if (job->callback_error.empty()) job->callback_error = err.Message();
          job->cancel->store(true);
        }
        delete e;
      });
    };
    job->ok = guarded(job->error, [&] {
      return rt::rt_model_generate(*job->model, job->request, job->cancel.get(), on_token, job->results, job->stats,
                                   job->error);
    });
    job->model.reset();
    post(*job, new job_event{job_event::kind::done, 0, 0, 0, 0, nullptr}, [job](Napi::Env env, Napi::Function, job_event * e) {
      delete e;
      try {
        if (!job->ok) job->deferred.Reject(Napi::Error::New(env, job->error).Value());
        else if (!job->callback_error.empty()) job->deferred.Reject(Napi::Error::New(env, "onToken threw: " + job->callback_error).Value());
        else job->deferred.Resolve(result_object(env, *job));
      } catch (const Napi::Error &) {
        // the environment is stopping: nobody is waiting for the promise
      }
    });
  });

  generations_.erase(std::remove_if(generations_.begin(), generations_.end(),
                                    [](const std::weak_ptr<std::atomic<bool>> & c) { return c.expired(); }),
                     generations_.end());
  generations_.push_back(job->cancel);
  return job_handle(env, job->deferred.Promise(), job->cancel);
}

Napi::Value load_model(const Napi::CallbackInfo & ci) {
  Napi::Env env = ci.Env();
  if (!ci[0].IsObject()) throw Napi::TypeError::New(env, "loadModel: options must be an object");
  Napi::Object o = ci[0].As<Napi::Object>();
  rt::model_load_options opts;
  opts.dir = get_string(o, "dir", "");
  if (opts.dir.empty()) throw Napi::TypeError::New(env, "loadModel: options.dir is required");
  opts.weights = get_string(o, "weights", "bf16");
  opts.backend = get_string(o, "backend", "cpu");
  opts.threads = static_cast<int>(get_int(env, o, "loadModel", "threads", 0, 0, 1024));
  opts.max_context = static_cast<int>(get_int(env, o, "loadModel", "maxContext", 0, 0, INT_MAX_OPT));
  opts.max_sequences = static_cast<int>(get_int(env, o, "loadModel", "maxSequences", 0, 0, INT_MAX_OPT));
  opts.expert_budget_bytes = get_int(env, o, "loadModel", "expertBudget", 0, 0, int64_t{1} << 53);
  opts.expert_slots = static_cast<int>(get_int(env, o, "loadModel", "expertSlots", 0, 0, INT_MAX_OPT));
  opts.device = static_cast<int>(get_int(env, o, "loadModel", "device", 0, 0, 1023));
  auto * w = new load_worker(env, opts);
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

struct pack_job {
  rt::pack_options options;
  rt::pack_result result;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  std::string error;
  bool ok = false;
  Napi::Promise::Deferred deferred;
  Napi::ThreadSafeFunction tsfn;
  std::thread thread;
  explicit pack_job(Napi::Env env) : deferred(env) {}
};

Napi::Value pack(const Napi::CallbackInfo & ci) {
  Napi::Env env = ci.Env();
  if (!ci[0].IsObject()) throw Napi::TypeError::New(env, "pack: options must be an object");
  Napi::Object o = ci[0].As<Napi::Object>();
  auto job = std::make_shared<pack_job>(env);
  job->options.src_dir = get_string(o, "src", "");
  job->options.dst_dir = get_string(o, "dst", "");
  if (job->options.src_dir.empty() || job->options.dst_dir.empty()) throw Napi::TypeError::New(env, "pack: src and dst are required");
  job->options.group_size = static_cast<int>(get_int(env, o, "pack", "groupSize", 0, 0, 1 << 20));
  job->options.threads = static_cast<int>(get_int(env, o, "pack", "threads", 0, 0, 1024));
  const int64_t shard = get_int(env, o, "pack", "shardBytes", 0, 0, int64_t{1} << 53);
  if (shard > 0) job->options.shard_bytes = static_cast<uint64_t>(shard);
  Napi::Function cb = ci.Length() > 1 && ci[1].IsFunction() ? ci[1].As<Napi::Function>() : noop(env);
  start_job(env, job, cb, "horizon-pack", [job] {
    auto progress = [job](uint64_t done, uint64_t total) {
      auto * ev = new job_event{job_event::kind::progress, 0, 0, static_cast<double>(done), static_cast<double>(total),
                                nullptr};
      post(*job, ev, [](Napi::Env env, Napi::Function fn, job_event * e) {
        try {
          fn.Call({Napi::Number::New(env, e->done_bytes), Napi::Number::New(env, e->total_bytes)});
        } catch (const Napi::Error &) {
        }
        delete e;
      });
    };
    job->ok = guarded(job->error, [&] { return rt::rt_qpacked_pack(job->options, progress, job->cancel.get(), job->result, job->error); });
    post(*job, new job_event{job_event::kind::done, 0, 0, 0, 0, nullptr}, [job](Napi::Env env, Napi::Function, job_event * e) {
      delete e;
      try {
        if (!job->ok) {
          job->deferred.Reject(Napi::Error::New(env, job->error).Value());
          return;
        }
        Napi::Object r = Napi::Object::New(env);
        r.Set("groupSize", job->result.group_size);
        r.Set("sourceFiles", to_array(env, job->result.source_files));
        r.Set("outputFiles", to_array(env, job->result.output_files));
        r.Set("sourceBytes", static_cast<double>(job->result.source_bytes));
        job->deferred.Resolve(r);
      } catch (const Napi::Error &) {
        // the environment is stopping: nobody is waiting for the promise
      }
    });
  });
  return job_handle(env, job->deferred.Promise(), job->cancel);
}

}  // namespace

void model_wrap_init(Napi::Env env, Napi::Object exports) {
  Napi::Function ctor = model_wrap::define(env);
  env.SetInstanceData<Napi::FunctionReference>(new Napi::FunctionReference(Napi::Persistent(ctor)));
  exports.Set("loadModel", Napi::Function::New(env, load_model));
  exports.Set("pack", Napi::Function::New(env, pack));
}

}  // namespace horizon_addon
