/*
 * mpc_tables.h: codec's field tables, read by the help text (mpc_help.c) so `memplan ... --help` lists exactly the fields
 * the decoders take, with their allowed values, and can never drift from them; and the enum names the JSON
 * encoders write, which the text renderer (mpc_text.c) writes alike. Private to codec/.
 */
#ifndef MPC_TABLES_H
#define MPC_TABLES_H

#include "../model/fields.h"

/* A request body's table (mpc_inference.c, mpc_training.c); *n gets its length. */
const mpm_field *mpc_inference_field_table(size_t *n);
const mpm_field *mpc_weight_formats_field_table(size_t *n);
const mpm_field *mpc_training_field_table(size_t *n);
/* The API's names of a training plan's enums (mpc_training.c), for the text renderer. */
const char *mpc_training_precision_name(mp_precision v);
const char *mpc_training_optimizer_name(mp_optimizer v);
const char *mpc_training_recompute_name(mp_recompute v);
const char *mpc_training_sharding_name(mp_sharding v);
const char *mpc_training_phase_name(mp_train_phase v);
/* The roofline's (mpc_roofline.c): the transformer object, and the operation kinds by index with their names. */
const mpm_field *mpc_transformer_field_table(size_t *n);
const mpm_field *mpc_op_field_table(size_t kind, const char **name, size_t *n); /* NULL past the last kind */

#endif /* MPC_TABLES_H */
