/*
 * train_config.h: the training-time details of a Hugging Face config that mp_model's architecture decoding
 * does not need for inference: dropout probabilities and how the MLP activation is computed. Owned by the
 * training plan; kept apart from hf_config.c so the inference decoding stays as it is.
 */
#ifndef MPD_TRAIN_CONFIG_H
#define MPD_TRAIN_CONFIG_H

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

/*
 * Sets m->attention_dropout, hidden_dropout, embedding_dropout (probability > 0) and composite_activation
 * (gelu_new) from cfg, with the model type's transformers defaults for absent keys (GPT2Config: 0.1 for
 * attn_pdrop, resid_pdrop and embd_pdrop, activation_function "gelu_new"; Llama-family configs: no dropout).
 * Never fails: values of the wrong type count as absent. Borrowed: cfg.
 */
void mpd_training_config_extras(const cJSON *cfg, mp_model *m);

#endif /* MPD_TRAIN_CONFIG_H */
