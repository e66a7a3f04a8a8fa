#!/usr/bin/env python3
"""
model_types.py: the model types of transformers' text-generation mappings, the enumeration memplan's table is held
against (run by hand with the ground-truth venv; `make model-types`).

Writes tests/ref/hf/model_types.json: {"transformers", "causal_lm": {model_type: class}, "image_text_to_text":
{model_type: class}} from transformers.models.auto.modeling_auto's MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and
MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES. tests/test_types.c checks that every type of it is a row of
model/mpm_types.c or a refusal there (a 422 that says why), and how many are neither yet.
"""
import json
import os
import sys

import transformers
from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                    MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "ref", "hf", "model_types.json")


def main():
    doc = {"about": "Made by tools/groundtruth/model_types.py from transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and "
                    "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.",
           "transformers": transformers.__version__,
           "causal_lm": dict(sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items())),
           "image_text_to_text": dict(sorted(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.items()))}
    with open(OUT, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"{len(doc['causal_lm'])} causal-LM and {len(doc['image_text_to_text'])} image-text-to-text types "
          f"({len(set(doc['causal_lm']) | set(doc['image_text_to_text']))} in all) into {OUT}")


if __name__ == "__main__":
    sys.exit(main())
