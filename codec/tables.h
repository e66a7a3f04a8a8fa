/*
 * tables.h: codec's field tables, read by the help text (help.c) so `memplan ... --help` lists exactly the fields
 * the decoders take, with their allowed values, and can never drift from them. Private to codec/.
 */
#ifndef MPC_TABLES_H
#define MPC_TABLES_H

#include "../model/fields.h"

/* A request body's table (inference.c, training.c); *n gets its length. */
const mpm_field *mpc_inference_field_table(size_t *n);
const mpm_field *mpc_weight_formats_field_table(size_t *n);
const mpm_field *mpc_training_field_table(size_t *n);
/* The roofline's (roofline.c): the transformer object, and the operation kinds by index with their names. */
const mpm_field *mpc_transformer_field_table(size_t *n);
const mpm_field *mpc_op_field_table(size_t kind, const char **name, size_t *n); /* NULL past the last kind */

#endif /* MPC_TABLES_H */
