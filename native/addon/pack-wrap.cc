// Node glue for the qpacked-v2 packer (rt_qpacked_pack): pack(options, onProgress) -> { promise, cancel() }. The
// packing runs on its own thread; progress and the result travel through one thread-safe function.
#include "pack-wrap.h"

#include "job-glue.h"

namespace horizon_addon {

namespace {

struct pack_job {
  rt::pack_options options;
  rt::pack_result result;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  rt::rt_error error;
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
    // onProgress(doneBytes, totalBytes) as the tensors go, and onProgress(doneBytes, totalBytes, name) once an output
    // shard is in place.
    const auto report = [job](double done, double total, const std::string & file) {
      auto * ev = new job_event{job_event::kind::progress, 0, 0, done, total, nullptr, file};
      post(*job, ev, [](Napi::Env env, Napi::Function fn, job_event * e) {
        try {
          if (e->file.empty()) {
            fn.Call({Napi::Number::New(env, e->done_bytes), Napi::Number::New(env, e->total_bytes)});
          } else {
            fn.Call({Napi::Number::New(env, e->done_bytes), Napi::Number::New(env, e->total_bytes), Napi::String::New(env, e->file)});
          }
        } catch (const Napi::Error &) {
        }
        delete e;
      });
    };
    double last_done = 0, last_total = 0;
    auto progress = [&](uint64_t done, uint64_t total) {
      last_done = static_cast<double>(done);
      last_total = static_cast<double>(total);
      report(last_done, last_total, std::string());
    };
    auto on_shard = [&](const std::string & name) { report(last_done, last_total, name); };
    job->ok = guarded(job->error, [&] {
      return rt::rt_qpacked_pack(job->options, progress, job->cancel.get(), job->result, job->error, on_shard);
    });
    post(*job, new job_event{job_event::kind::done, 0, 0, 0, 0, nullptr, {}}, [job](Napi::Env env, Napi::Function, job_event * e) {
      delete e;
      try {
        if (!job->ok) {
          job->deferred.Reject(to_js_error(env, job->error).Value());
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

void pack_wrap_init(Napi::Env env, Napi::Object exports) { exports.Set("pack", Napi::Function::New(env, pack)); }

}  // namespace horizon_addon
