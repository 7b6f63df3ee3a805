// Node glue for rt-runtime.h: loadModel and the model handle (info, logits, generate, close). Long work runs
// off the JS thread; tokens, progress and the final result travel through one thread-safe function per request,
// so the result always arrives after the last token.
#include "model-wrap.h"

#include "job-glue.h"

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
    o.Set("backend", rt::backend_kind_name(i.backend));
    o.Set("weights", rt::weights_kind_name(i.weights));
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
    const bool ok = guarded(error_, [&] {
      model_ = rt::rt_model_load(opts_, error_);
      return model_ != nullptr;
    });
    if (!ok) SetError(error_.message);
  }
  void OnOK() override {
    Napi::Object obj = model_ctor(Env()).New({});
    model_wrap::Unwrap(obj)->model = model_;
    deferred_.Resolve(obj);
  }
  void OnError(const Napi::Error &) override { deferred_.Reject(to_js_error(Env(), error_).Value()); }

 private:
  rt::model_load_options opts_;
  rt::rt_error error_;
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<rt::model> model_;
};

class logits_worker : public Napi::AsyncWorker {
 public:
  logits_worker(Napi::Env env, std::shared_ptr<rt::model> m, std::vector<int32_t> t, rt::expert_rounding rounding, int from)
      : Napi::AsyncWorker(env), model_(std::move(m)), tokens_(std::move(t)), rounding_(rounding), from_(from), deferred_(env) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    if (!guarded(error_, [&] { return rt::rt_model_logits(*model_, tokens_, out_, error_, rounding_, from_); })) SetError(error_.message);
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
  void OnError(const Napi::Error &) override { deferred_.Reject(to_js_error(Env(), error_).Value()); }

 private:
  rt::rt_error error_;
  std::shared_ptr<rt::model> model_;
  std::vector<int32_t> tokens_;
  rt::expert_rounding rounding_;
  int from_;
  std::vector<std::vector<float>> out_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value model_wrap::logits(const Napi::CallbackInfo & ci) {
  Napi::Env env = ci.Env();
  auto m = need(env);
  rt::expert_rounding rounding = rt::expert_rounding::none;
  int from = 0;
  if (ci.Length() > 1 && !ci[1].IsUndefined()) {
    if (!ci[1].IsObject()) throw Napi::TypeError::New(env, "logits: options must be an object");
    const Napi::Object o = ci[1].As<Napi::Object>();
    const std::string name = get_string(o, "expertRounding", "none");
    if (!rt::parse_expert_rounding(name, rounding)) {
      throw Napi::TypeError::New(env, "logits: unknown expertRounding '" + name + "' (expected none or q4_0)");
    }
    from = static_cast<int>(get_int(env, o, "logits", "from", 0, 0, INT_MAX_OPT));
  }
  auto * w = new logits_worker(env, m, to_tokens(env, ci[0], "tokens"), rounding, from);
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}


struct generate_job {
  std::shared_ptr<rt::model> model;
  rt::generate_request request;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  std::vector<rt::generate_result> results;
  rt::generate_stats stats;
  rt::rt_error error;
  bool ok = false;
  std::string callback_error;
  Napi::Promise::Deferred deferred;
  Napi::ThreadSafeFunction tsfn;
  std::thread thread;
  explicit generate_job(Napi::Env env) : deferred(env) {}
};


Napi::Object end_object(Napi::Env env, const rt::generate_result & r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("tokens", to_array(env, r.tokens));
  o.Set("promptTokens", r.prompt_tokens);
  o.Set("ttftMs", r.ttft_ms);
  o.Set("decodeTokensPerSecond", r.decode_tokens_per_s);
  o.Set("finishReason", rt::finish_reason_name(r.finish_reason));
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
  job->request.batch = static_cast<int>(get_int(env, req, "generate", "batch", 0, 0, INT_MAX_OPT));
  if (req.Get("startCancelled").ToBoolean().Value()) job->cancel->store(true);
  Napi::Value stops = req.Get("stopTokens");
  if (!stops.IsUndefined() && !stops.IsNull()) job->request.stop_tokens = to_tokens(env, stops, "request.stopTokens");
  Napi::Function cb = ci.Length() > 1 && ci[1].IsFunction() ? ci[1].As<Napi::Function>() : noop(env);
  start_job(env, job, cb, "horizon-generate", [job] {
    rt::token_callback on_token = [job](int index, int32_t token, const rt::generate_result * end) {
      auto * ev = new job_event{job_event::kind::token, index, token, 0, 0, nullptr, {}};
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
    post(*job, new job_event{job_event::kind::done, 0, 0, 0, 0, nullptr, {}}, [job](Napi::Env env, Napi::Function, job_event * e) {
      delete e;
      try {
        if (!job->ok) job->deferred.Reject(to_js_error(env, job->error).Value());
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
  const std::string weights = get_string(o, "weights", "bf16");
  if (!rt::parse_weights_kind(weights, opts.weights)) {
    throw Napi::TypeError::New(env, "loadModel: unknown weights '" + weights + "' (expected bf16 or int4)");
  }
  const std::string backend = get_string(o, "backend", "cpu");
  if (!rt::parse_backend_kind(backend, opts.backend)) {
    throw Napi::TypeError::New(env, "loadModel: unknown backend '" + backend + "' (expected cpu or cuda)");
  }
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


}  // namespace

void model_wrap_init(Napi::Env env, Napi::Object exports) {
  Napi::Function ctor = model_wrap::define(env);
  env.SetInstanceData<Napi::FunctionReference>(new Napi::FunctionReference(Napi::Persistent(ctor)));
  exports.Set("loadModel", Napi::Function::New(env, load_model));
  }

}  // namespace horizon_addon
