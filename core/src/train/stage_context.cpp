// A stage's view of the run: each member reads or changes one part of the pipeline's state.
#include "ingot/train/stage_context.h"

#include "ingot/base/error.h"
#include "pipeline_state.h"

namespace ingot::train {

const config::Config& StageContext::config() const { return s_->cfg; }
std::ostream& StageContext::out() const { return s_->out; }
uint64_t StageContext::seed() const { return s_->seed; }
Generator& StageContext::init_generator() const { return s_->init_gen; }
Generator& StageContext::dropout_generator() const { return s_->dropout_gen; }
const TrainConfig& StageContext::train_config() const { return s_->train; }
const data::DataConfig& StageContext::data_config() const { return s_->data; }

data::DataLoader& StageContext::train_loader() const {
  INGOT_CHECK(s_->loaders.train != nullptr, "StageContext: the pipeline has no train split");
  return *s_->loaders.train;
}

data::DataLoader& StageContext::test_loader() const {
  INGOT_CHECK(s_->loaders.test != nullptr, "StageContext: the pipeline has no test split");
  return *s_->loaders.test;
}

data::DataLoader* StageContext::validation_loader() const { return s_->loaders.validation.get(); }
const std::vector<std::string>& StageContext::class_names() const { return s_->class_names; }
const TrainPosition& StageContext::position() const { return s_->position; }
bool StageContext::writes_files() const { return s_->writes_files(); }
int StageContext::world_size() const { return s_->world_size(); }

MetricsLog& StageContext::metrics() const {
  INGOT_CHECK(s_->metrics != nullptr, "StageContext: the run's metrics are not open yet");
  return *s_->metrics;
}

ProgressBar& StageContext::progress() const {
  INGOT_CHECK(s_->progress != nullptr, "StageContext: the run's progress bar is not made yet");
  return *s_->progress;
}

nn::Module& StageContext::model() const { return *s_->model; }
const nn::ModulePtr& StageContext::model_ptr() const { return s_->model; }

void StageContext::replace_model(nn::ModulePtr model) {
  INGOT_CHECK(model != nullptr, "StageContext::replace_model: no model");
  s_->model = std::move(model);
  s_->forget_evaluation();
}

void StageContext::model_changed() { s_->forget_evaluation(); }

const EvalResult* StageContext::last_evaluation() const {
  return s_->last_eval && s_->last_eval_step == s_->position.step ? &*s_->last_eval : nullptr;
}

std::vector<TrainCallback*> StageContext::callbacks() const {
  std::vector<TrainCallback*> out;
  for (const auto& cb : s_->callbacks) out.push_back(cb.get());
  return out;
}

void StageContext::add_callback(std::unique_ptr<TrainCallback> callback) {
  INGOT_CHECK(callback != nullptr, "StageContext::add_callback: no callback");
  s_->callbacks.push_back(std::move(callback));
}

void StageContext::set_note(std::string note) { s_->stage_note = std::move(note); }
const std::string& StageContext::note() const { return s_->stage_note; }

void StageContext::fail(std::string why) {
  s_->status = TrainStatus::Failed;
  s_->failure = std::move(why);
}

}  // namespace ingot::train
