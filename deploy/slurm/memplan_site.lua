-- memplan_site.lua: the site's settings for memplan's Slurm scripts (cli_filter.lua and job_submit.lua), beside them
-- and slurm.conf (/etc/slurm/memplan_site.lua). Lua table syntax, read as data: text only, in an empty environment
-- (it can call nothing), every key checked (an unknown key or a wrong type is refused, naming it). job_submit.lua
-- reads it again whenever it changes; until a changed file reads right, the last good settings stay.
return {
  -- where cli_filter.lua asks (POST /v1/fit); cli_filter runs on login nodes, as the submitting user
  url = "http://memplan.example.org:8080",
  -- seconds cli_filter waits for memplan before it lets the job through unchecked (advisory; 1 to 60)
  timeout_seconds = 5,
  -- the table job_submit.lua looks jobs up in, exported by memplan (-f: an error answer never replaces the table;
  -- the mv replaces it whole; job_submit.lua refuses a table without its end line and keeps the last good one):
  --   curl -sf http://memplan:8080/v1/slurm/fit-table -H 'Content-Type: application/json' \
  --     -d @/etc/slurm/memplan_jobs.json -o /etc/slurm/memplan_fit.txt.new && \
  --     mv /etc/slurm/memplan_fit.txt.new /etc/slurm/memplan_fit.txt
  fit_table = "/etc/slurm/memplan_fit.txt",
  -- "reject": refuse a job that asks for fewer GPUs than it needs; "correct": raise its GPU request to the count
  mode = "reject",
  -- GPU counts cli_filter asks memplan about for MEMPLAN_MODEL jobs (the job's smallest fitting count among them)
  gpu_counts = { 1, 2, 4, 8 },
  -- GRES type (gres.conf Type=, or what AutoDetect=nvml names the GPU) -> memplan device profile. Types
  -- AutoDetect gives the profiles' GPUs ("nvidia_h100_80gb_hbm3") come with the exported table; list here the
  -- site's own abbreviations (lowercase).
  gres = {
    h100 = "h100-sxm5-80gb",
    h200 = "h200-sxm-141gb",
    a100 = "a100-sxm4-80gb",
    a100_40g = "a100-sxm4-40gb",
    l40s = "l40s-48gb",
    t4 = "t4-16gb",
  },
  -- the GPU type of a partition, for jobs that ask for untyped GPUs (--gres=gpu:2, --gpus-per-node=2)
  partitions = {
    gpu = "h100",
  },
  default_partition = "gpu",
}
