/*
 * ggml_types.c: prints ggml's own type table (id, name, values per block, bytes per block, quantised) from the
 * llama.cpp build tools/groundtruth/llamacpp/build.sh made, for tests/ref/llamacpp/ggml_types.tsv. Built and run
 * by that script (never by make check): planner/ggml.c's table is checked against its output.
 */
#include <stdio.h>

#include "ggml.h"

int main(void)
{
	printf("# id\tname\tblock_values\tblock_bytes\tquantized\n");
	for (int t = 0; t < GGML_TYPE_COUNT; t++) {
		size_t bs = ggml_blck_size((enum ggml_type)t);
		if (bs == 0)
			continue; /* removed ids */
		printf("%d\t%s\t%zu\t%zu\t%d\n", t, ggml_type_name((enum ggml_type)t), bs,
		       ggml_type_size((enum ggml_type)t), ggml_is_quantized((enum ggml_type)t) ? 1 : 0);
	}
	return 0;
}
