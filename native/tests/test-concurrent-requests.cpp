// Requests on one model from several threads at once, as the Node addon makes them (each generate on its own thread,
// logits on libuv's pool, info and cancel from the JS thread): each gives what it gives alone, and a cancelled one
// stops with a prefix of it. Built with -fsanitize=thread this is the runtime's data-race check.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "rt/rt-runtime.h"
#include "test-helpers.h"

using namespace rt;
namespace fs = std::filesystem;

static const std::vector<std::vector<int32_t>> PROMPTS = {{3, 17, 42}, {5, 9, 60, 11}};
static const std::vector<int32_t> TOKENS = {3, 17, 42, 5, 9};
constexpr int MAX_NEW = 8;

static bool generate(model & m, const std::atomic<bool> * cancel, std::vector<generate_result> & res, rt_error & err) {
  generate_request r;
  r.prompts = PROMPTS;
  r.max_new_tokens = MAX_NEW;
  generate_stats st;
  return rt_model_generate(m, r, cancel, [](int, int32_t, const generate_result *) {}, res, st, err);
}

static bool prefix_of(const std::vector<int32_t> & a, const std::vector<int32_t> & b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

int main() {
  const fs::path root = test_util::temp_dir("concurrent");
  test_util::write_tiny_model(root / "m", test_util::tiny_config{}, 21);
  model_load_options o;
  o.dir = (root / "m").string();
  o.threads = 2;
  rt_error err;
  std::shared_ptr<model> m = rt_model_load(o, err);
  CHECK(m != nullptr, "load: %s", err.message.c_str());
  if (!m) return test_util::finish("test-concurrent-requests");

  std::vector<generate_result> alone;
  std::vector<std::vector<float>> alone_logits;
  CHECK(generate(*m, nullptr, alone, err), "generate: %s", err.message.c_str());
  CHECK(rt_model_logits(*m, TOKENS, alone_logits, err), "logits: %s", err.message.c_str());

  // The threads count what goes wrong and say what it was; CHECK is for the main thread.
  std::atomic<int> wrong{0}, cancelled{0}, infos{0};
  std::mutex said_mu;
  std::vector<std::string> said;
  const auto say = [&](std::string what) {
    wrong.fetch_add(1);
    std::lock_guard<std::mutex> lock(said_mu);
    if (said.size() < 8) said.push_back(std::move(what));
  };
  std::atomic<bool> done{false};
  std::thread info_thread([&] {
    do {
      const model_info i = rt_model_info(*m);
      if (i.backend != backend_kind::cpu || !i.fault.empty()) say("info: backend or fault '" + i.fault + "'");
      infos.fetch_add(1);
    } while (!done.load());
  });
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&, c] {
      for (int it = 0; it < 4; ++it) {
        std::atomic<bool> cancel{false};
        std::thread canceller([&] {
          if (c != 0) return;
          std::this_thread::sleep_for(std::chrono::microseconds(200 * it));
          cancel.store(true);
        });
        std::vector<generate_result> res;
        rt_error gerr;
        if (!generate(*m, &cancel, res, gerr)) {
          say("client " + std::to_string(c) + " request " + std::to_string(it) + ": generate failed: " + gerr.message);
        } else {
          for (size_t i = 0; i < PROMPTS.size(); ++i) {
            const bool stopped = res[i].finish_reason == finish_reason::cancelled;
            cancelled.fetch_add(stopped ? 1 : 0);
            const bool same = stopped ? prefix_of(res[i].tokens, alone[i].tokens) : res[i].tokens == alone[i].tokens;
            if (!same)
              say("client " + std::to_string(c) + " request " + std::to_string(it) + " prompt " + std::to_string(i) + ": " +
                  std::to_string(res[i].tokens.size()) + " tokens (" + (stopped ? "cancelled" : "not cancelled") +
                  ") that are not " + (stopped ? "a prefix of the " : "the ") + std::to_string(alone[i].tokens.size()) +
                  " it gives alone");
          }
        }
        canceller.join();
        std::vector<std::vector<float>> lg;
        rt_error lerr;
        const bool ok = rt_model_logits(*m, TOKENS, lg, lerr);
        if (!ok) say("client " + std::to_string(c) + " logits failed: " + lerr.message);
        else if (lg != alone_logits) say("client " + std::to_string(c) + " request " + std::to_string(it) + ": logits differ from alone");
      }
    });
  }
  for (auto & t : clients) t.join();
  done.store(true);
  info_thread.join();
  CHECK(wrong.load() == 0, "%d requests failed or differ from the same request alone", wrong.load());
  for (const std::string & w : said) std::printf("  %s\n", w.c_str());
  std::printf("concurrent requests: %d prompts cancelled, %d info calls\n", cancelled.load(), infos.load());
  m.reset();
  fs::remove_all(root);
  return test_util::finish("test-concurrent-requests");
}
