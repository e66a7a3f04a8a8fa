"""test_deploy.py: the cluster deployment under deploy/ without a cluster. Every manifest of deploy/kubernetes is
parsed and checked against the Kubernetes object models of the `kubernetes` Python client (a member the models do
not know is an error, as a typo would be dropped silently by the API server's older versions), and against each
other (names referenced exist, selectors match, ports named); the KubeSchedulerConfiguration against the field names
of kube-scheduler's config/v1 types (tests/ref/k8s/kube-scheduler-config-v1.json) and memplan's routes; the central
daemon's config file against the daemon's own parser; the Grafana dashboard against the metrics memplan and DCGM
export (tests/ref/dcgm/exporter.json); the Prometheus rules with promtool (check and unit tests); the extender's
metrics with `promtool check metrics`; and the node agent's script, run for real (CPU calibration) against a
central daemon with a token."""
import glob
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import urllib.request

import pytest
import yaml
from kubernetes import client

from daemon import BIN, ROOT, Daemon

DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")
NS = "memplan-system"


def docs():
    out = []
    for path in sorted(glob.glob(os.path.join(DEPLOY, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            for d in yaml.safe_load_all(f):
                if d:
                    out.append((os.path.basename(path), d))
    return out


def find(kind, name):
    for _, d in docs():
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return d
    raise AssertionError("no %s %s in deploy/kubernetes" % (kind, name))


def round_trip(doc):
    """The document through the client's model of its kind and back: what the models keep of it."""
    kind = doc["kind"]
    version = doc["apiVersion"].split("/")[-1].capitalize()
    model = version + kind
    assert hasattr(client.models, model), "the kubernetes client has no model %s" % model
    api = client.ApiClient()
    obj = api.deserialize(json.dumps(doc), model, "application/json")
    return api.sanitize_for_serialization(obj)


def lost(orig, kept, path=""):
    """Members of orig the model dropped or changed (unknown fields, wrong types)."""
    out = []
    if isinstance(orig, dict):
        if not isinstance(kept, dict):
            return ["%s: %r became %r" % (path, orig, kept)]
        for k, v in orig.items():
            if k not in kept:
                if v not in ({}, [], None):
                    out.append("%s/%s is not a field of the model" % (path, k))
                continue
            out += lost(v, kept[k], path + "/" + k)
    elif isinstance(orig, list):
        if not isinstance(kept, list) or len(kept) != len(orig):
            return ["%s: list changed" % path]
        for i, (a, b) in enumerate(zip(orig, kept)):
            out += lost(a, b, "%s/%d" % (path, i))
    elif orig != kept and str(orig) != str(kept):
        out.append("%s: %r became %r" % (path, orig, kept))
    return out


def test_manifests_are_kubernetes_objects():
    seen = set()
    problems = []
    for name, d in docs():
        for k in ("apiVersion", "kind", "metadata"):
            assert k in d, "%s: a %s without %s" % (name, d.get("kind"), k)
        kept = round_trip(d)
        problems += ["%s %s %s" % (name, d["kind"], p) for p in lost(d, kept)]
        seen.add(d["kind"])
        if d["kind"] not in ("Namespace", "ClusterRoleBinding", "ClusterRole"):
            assert d["metadata"].get("namespace") in (NS, "kube-system"), "%s: %s in no namespace" % (name, d["kind"])
    assert not problems, "\n".join(problems)
    assert {"Deployment", "DaemonSet", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim"} <= seen


def test_the_validator_catches_a_typo():
    """The check can fail: a misspelt member and a wrong type are reported."""
    d = find("Deployment", "memplan")
    bad = json.loads(json.dumps(d))
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    assert any("imagePullPolicyy" in p for p in lost(bad, round_trip(bad)))
    bad = json.loads(json.dumps(d))
    bad["spec"]["replicas"] = "one"
    with pytest.raises(Exception):
        round_trip(bad)


def pod_specs():
    for _, d in docs():
        if d["kind"] in ("Deployment", "DaemonSet"):
            yield d, d["spec"]["template"]["spec"]


def test_references_resolve():
    for d, spec in pod_specs():
        ns = d["metadata"]["namespace"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        for k, v in d["spec"]["selector"]["matchLabels"].items():
            assert labels.get(k) == v, "%s: selector %s does not match its pods" % (d["metadata"]["name"], k)
        if "serviceAccountName" in spec:
            assert find("ServiceAccount", spec["serviceAccountName"])["metadata"]["namespace"] == ns
        for v in spec.get("volumes", []):
            if "configMap" in v:
                assert find("ConfigMap", v["configMap"]["name"])["metadata"]["namespace"] == ns
            if "persistentVolumeClaim" in v:
                assert find("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"])["metadata"]["namespace"] == ns
        names = {v["name"] for v in spec.get("volumes", [])}
        for c in spec["containers"]:
            assert ":" in c["image"] and not c["image"].endswith(":latest"), "%s: pin the image" % c["name"]
            for m in c.get("volumeMounts", []):
                assert m["name"] in names, "%s mounts an unknown volume %s" % (c["name"], m["name"])
            ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
            for probe in ("readinessProbe", "livenessProbe"):
                port = c.get(probe, {}).get("httpGet", {}).get("port")
                assert port is None or port in ports or isinstance(port, int), "%s: %s port %s" % (c["name"], probe, port)
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    s = find("Secret", ref["name"])
                    assert ref["key"] in s.get("stringData", {}) or ref["key"] in s.get("data", {})
    svc = find("Service", "memplan")
    dep = find("Deployment", "memplan")
    pods = dep["spec"]["template"]["metadata"]["labels"]
    assert all(pods.get(k) == v for k, v in svc["spec"]["selector"].items())
    named = {p["name"] for c in dep["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
    assert svc["spec"]["ports"][0]["targetPort"] in named


def test_secure_by_default():
    """The token ships empty, and the central daemon then refuses to listen beyond loopback; its config file is
    read by the daemon's own parser (every key a real setting)."""
    assert find("Secret", "memplan-token")["stringData"]["token"] == ""
    conf = find("ConfigMap", "memplan-config")["data"]["memplan.conf"]
    assert re.search(r"^listen = 0\.0\.0\.0:8080$", conf, re.M)
    d = tempfile.mkdtemp(prefix="memplan-deploy-")
    try:
        path = os.path.join(d, "memplan.conf")
        with open(path, "w", encoding="utf-8") as f:
            f.write(conf.replace("/var/lib/memplan/memplan.db", os.path.join(d, "memplan.db"))
                    .replace("0.0.0.0:8080", "0.0.0.0:0"))
        r = subprocess.run([BIN, "serve", "--config", path], capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, MEMPLAN_TOKEN=""))
        assert r.returncode != 0 and "token" in r.stderr, r.stderr
    finally:
        shutil.rmtree(d)
    for d, spec in pod_specs():
        for c in spec["containers"]:
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            assert c["securityContext"]["readOnlyRootFilesystem"] is True


def test_node_agent_daemonset():
    ds = find("DaemonSet", "memplan-node-agent")
    spec = ds["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    c = spec["containers"][0]
    # it reaches the GPU through the NVIDIA runtime, and takes none from the scheduler's pool
    assert "nvidia.com/gpu" not in json.dumps(c.get("resources", {}))
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    svc = find("Service", "memplan")
    assert env["MEMPLAN_CENTRAL_URL"]["value"] == "http://%s.%s.svc:%d" % (svc["metadata"]["name"], NS,
                                                                         svc["spec"]["ports"][0]["port"])
    feats = [v for v in spec["volumes"] if v["name"] == "features"][0]["hostPath"]["path"]
    assert feats == "/etc/kubernetes/node-feature-discovery/features.d"  # NFD's local source


def test_scheduler_configuration():
    ref = json.load(open(os.path.join(ROOT, "tests", "ref", "k8s", "kube-scheduler-config-v1.json"), encoding="utf-8"))
    cm = find("ConfigMap", "memplan-scheduler-config")
    cfg = yaml.safe_load(cm["data"]["scheduler-config.yaml"])
    assert cfg["apiVersion"] == ref["apiVersion"] and cfg["kind"] == "KubeSchedulerConfiguration"
    assert set(cfg) <= set(ref["KubeSchedulerConfiguration"]), set(cfg) - set(ref["KubeSchedulerConfiguration"])
    for p in cfg["profiles"]:
        assert set(p) <= set(ref["KubeSchedulerProfile"])
    ext = cfg["extenders"]
    assert len(ext) == 1
    e = ext[0]
    assert set(e) <= set(ref["Extender"]), set(e) - set(ref["Extender"])
    for m in e["managedResources"]:
        assert set(m) <= set(ref["ExtenderManagedResource"])
    svc = find("Service", "memplan")
    assert e["urlPrefix"] == "http://%s.%s.svc:%d/v1/k8s" % (svc["metadata"]["name"], NS, svc["spec"]["ports"][0]["port"])
    spec = yaml.safe_load(open(os.path.join(ROOT, "openapi.yaml"), encoding="utf-8"))
    for verb in ("filterVerb", "prioritizeVerb"):
        assert "post" in spec["paths"]["/v1/k8s/" + e[verb]], "%s %s is no memplan route" % (verb, e[verb])
    assert "bindVerb" not in e and "preemptVerb" not in e
    # names only: each node judged by its agent's report in the node cache (test_node_agent_reports_and_observes)
    assert e["nodeCacheCapable"] is True and e["ignorable"] is True and e["weight"] > 0
    assert re.fullmatch(r"\d+s", e["httpTimeout"]) and int(e["httpTimeout"][:-1]) <= 5
    assert [m["name"] for m in e["managedResources"]] == ["nvidia.com/gpu"]
    # the second scheduler mounts this configuration and is named in it
    dep = find("Deployment", "memplan-scheduler")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert "--config=/etc/memplan-scheduler/scheduler-config.yaml" in c["command"]
    assert cfg["profiles"][0]["schedulerName"] == "memplan-scheduler"


def exported_metric_names():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "daemon", "*.c")):
        names |= set(re.findall(r'(?:"|# (?:HELP|TYPE) )(memplan_[a-z0-9_]+)', open(path, encoding="utf-8").read()))
    return names


def test_grafana_dashboard():
    cm = find("ConfigMap", "memplan-grafana-dashboard")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    with open(os.path.join(ROOT, "deploy", "grafana", "memplan-dashboard.json"), encoding="utf-8") as f:
        text = f.read()
    assert cm["data"]["memplan-dashboard.json"] == text, "the ConfigMap's copy differs from deploy/grafana"
    dash = json.loads(text)
    assert dash["uid"] and dash["title"] and dash["panels"]
    dcgm = json.load(open(os.path.join(ROOT, "tests", "ref", "dcgm", "exporter.json"), encoding="utf-8"))
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    # DCGM's own variables, as its official dashboard defines them
    assert variables["Hostname"]["query"]["query"] == "label_values(DCGM_FI_DEV_FB_FREE, Hostname)"
    assert "gpu" in variables
    memplan = exported_metric_names()
    planned_vs_used = False
    for p in dash["panels"]:
        assert p["datasource"]["uid"] == "${datasource}"
        for t in p["targets"]:
            expr = t["expr"]
            for m in re.findall(r"\b(memplan_[a-z0-9_]+)", expr):
                base = re.sub(r"_(bucket|count|sum)$", "", m)
                assert base in memplan, "panel %r uses %s, which memplan does not export" % (p["title"], m)
            for m in re.findall(r"\b(DCGM_FI_[A-Z_]+)", expr):
                assert m in dcgm["counters_mib"], "panel %r uses %s" % (p["title"], m)
                # MiB: scaled to bytes, unless the series only lends its labels (x 0 + 1)
                assert "1048576" in expr or "* 0 + 1" in expr, "DCGM's framebuffer figures are MiB: %r" % p["title"]
            for group in re.findall(r"(?:by|on) \(([^)]*)\)", expr):
                for label in [x.strip() for x in group.split(",")]:
                    assert label in dcgm["labels"] or label in ("le", "route", "verb", "outcome", "result"), label
            planned_vs_used |= "memplan_k8s_planned_memory_bytes" in expr and "DCGM_FI_DEV_FB_USED" in expr
            # the join survives honorLabels: false (the workload's labels as exported_*) and memory-matched nodes
            if "memplan_k8s_planned_memory_bytes" in expr and "DCGM_FI_DEV_FB_USED" in expr:
                assert "exported_pod" in expr and "on (namespace, pod)" in expr, p["title"]
                assert "on (namespace, pod, modelName)" not in expr, p["title"]
    assert planned_vs_used, "no panel puts memplan's plan beside DCGM's used framebuffer"
    exprs = " ".join(t["expr"] for p in dash["panels"] for t in p["targets"])
    assert "memplan_observation_error_ratio" in exprs and "memplan_observed_term_applied" in exprs


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus) is not installed")
def test_prometheus_rules():
    rules = os.path.join(ROOT, "deploy", "prometheus")
    r = subprocess.run(["promtool", "check", "rules", "memplan-rules.yaml"], cwd=rules, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["promtool", "test", "rules", "memplan-rules.test.yaml"], cwd=rules, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def post(url, body, token=None):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus) is not installed")
def test_extender_metrics_pass_promtool(daemon):
    pods = json.load(open(os.path.join(ROOT, "tests", "ref", "k8s", "pods.json"), encoding="utf-8"))["pods"]
    nodes = json.load(open(os.path.join(ROOT, "tests", "ref", "k8s", "nodes.json"), encoding="utf-8"))["nodes"]
    items = [{"metadata": {"name": n["name"], "labels": n["labels"]},
              "status": {"allocatable": {"nvidia.com/gpu": n["allocatable"]}}} for n in nodes]
    for pod in ("vllm-llama70b", "annotated-inference", "plain", "bad-annotation"):
        args = {"Pod": pods[pod], "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}
        post(daemon.url + "/v1/k8s/filter", args)
        post(daemon.url + "/v1/k8s/prioritize", args)
    with urllib.request.urlopen(daemon.url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    for name in ("memplan_k8s_pods_total", "memplan_k8s_filter_nodes_total", "memplan_k8s_planned_memory_bytes"):
        assert name in text
    assert re.search(r'memplan_k8s_planned_memory_bytes\{namespace="inference",pod="llama70b-0",.*'
                     r'modelName="NVIDIA H100 80GB HBM3"', text)
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    # promtool's one complaint may be the camelCase of DCGM's own label names (modelName), which these series
    # take on purpose so that they join with dcgm-exporter's; anything else fails
    other = [l for l in (r.stdout + r.stderr).splitlines()
             if l and not re.fullmatch(r"memplan_(k8s_planned|calibration)_[a-z_]+ label names should be written in "
                                       r"'snake_case' not 'camelCase'", l)]
    assert r.returncode in (0, 3) and not other, r.stdout + r.stderr
    bad = "memplan_bad_total counter\n# TYPE memplan_bad_total counter\nmemplan_bad_total{x=\"1\"} 1\n"
    assert subprocess.run(["promtool", "check", "metrics"], input=bad, capture_output=True, text=True).returncode != 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.skipif(shutil.which("jq") is None or shutil.which("curl") is None, reason="the agent needs jq and curl")
def test_node_agent_publishes_its_profile():
    """The DaemonSet's script, run as the DaemonSet runs it (with the CPU as the target: no GPU here): it calibrates
    with a local daemon, publishes measured-<node> to the central catalog with the token, and writes NFD features
    the extender reads."""
    script = find("ConfigMap", "memplan-node-agent")["data"]["node-agent.sh"]
    token = "t0k3n-" + os.urandom(8).hex()
    central = Daemon(env={"MEMPLAN_TOKEN": token})
    work = tempfile.mkdtemp(prefix="memplan-agent-")
    try:
        path = os.path.join(work, "node-agent.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)
        feats = os.path.join(work, "features.d", "memplan")
        env = dict(os.environ, NODE_NAME="GPU-Node-07.example", MEMPLAN_CENTRAL_URL=central.url, MEMPLAN_TOKEN=token,
                   MEMPLAN_BIN=BIN, MEMPLAN_CALIBRATE_TARGET="cpu", MEMPLAN_AGENT_PORT=str(free_port()),
                   MEMPLAN_CALIBRATE_OPTIONS='"suites":["stream"],"options":{"runs":10,"array_bytes":8388608}',
                   MEMPLAN_AGENT_DB=os.path.join(work, "agent", "memplan.db"), MEMPLAN_FEATURES_FILE=feats,
                   MEMPLAN_AGENT_EXIT="1", PATH="/usr/bin:/bin")
        r = subprocess.run(["/bin/sh", path], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        with urllib.request.urlopen(central.url + "/v1/devices/measured-gpu-node-07.example", timeout=10) as resp:
            dev = json.loads(resp.read())
        assert dev["source"] == "measured" and dev["measured_at"]
        assert dev["source_note"].startswith("memplan node agent on GPU-Node-07.example: ")
        lines = dict(l.split("=", 1) for l in open(feats, encoding="utf-8").read().split())
        assert lines["memplan-profile"] == "measured-gpu-node-07.example"
        assert int(lines["memplan-memory-bandwidth-gbps"]) == int(dev["memory_bandwidth_bytes_per_second"] // 1e9)
        # the feature is what NFD labels the node with, and the extender takes that profile first
        pod = json.load(open(os.path.join(ROOT, "tests", "ref", "k8s", "pods.json"), encoding="utf-8"))["pods"]["plain"]
        node = {"metadata": {"name": "gpu-node-07", "labels": {
            "feature.node.kubernetes.io/memplan-profile": lines["memplan-profile"]}}}
        res = post(central.url + "/v1/k8s/filter", {"Pod": pod, "Nodes": {"items": [node]}})
        assert res["NodeNames"] == ["gpu-node-07"]
    finally:
        central.stop()
        shutil.rmtree(work)


class _Fixed(http.server.BaseHTTPRequestHandler):
    """Serves one document per path (the fake kubelet's /pods, a fake vLLM pod's /metrics), counting requests."""
    routes = {}
    hits = {}

    def do_GET(self):
        body = self.routes.get(self.path)
        self.hits[self.path] = self.hits.get(self.path, 0) + 1
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if self.path == "/pods" else "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _serve(routes):
    handler = type("H", (_Fixed,), {"routes": routes, "hits": {}})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, handler


@pytest.mark.skipif(shutil.which("jq") is None or shutil.which("curl") is None, reason="the agent needs jq and curl")
def test_node_agent_reports_and_observes():
    """The DaemonSet's script against a fake kubelet and a fake vLLM pod, both started here: it reports the node's
    GPUs (nvidia-smi's CSV, from a stand-in that prints what nvidia-smi prints for an H100 SXM) to the catalog's
    node cache with its lease, reads the kubelet's pod list, scrapes the serving pod's /metrics (vLLM 0.11.0's own
    cache_config_info) and posts it as an observation once per container start; the extender then judges the node
    by name alone."""
    script = find("ConfigMap", "memplan-node-agent")["data"]["node-agent.sh"]
    token = "t0k3n-" + os.urandom(8).hex()
    central = Daemon(env={"MEMPLAN_TOKEN": token})
    work = tempfile.mkdtemp(prefix="memplan-agent-")
    metrics = open(os.path.join(ROOT, "tests", "ref", "engines", "vllm-0.11.0-cache-config-info.prom"),
                   encoding="utf-8").read().replace("NUMBLOCKS", "27781").encode()
    pod_srv, pod_h = _serve({"/metrics": metrics})
    pod = {"metadata": {"name": "llama8b-0", "namespace": "inference", "uid": "6a1f-0007"},
           "spec": {"nodeName": "gpu-node-07", "containers": [
               {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
                "ports": [{"name": "http", "containerPort": pod_srv.server_address[1]}],
                "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
           "status": {"phase": "Running", "podIP": "127.0.0.1",
                      "containerStatuses": [{"name": "vllm", "restartCount": 0}]}}
    other = {"metadata": {"name": "web", "namespace": "x", "uid": "1"},
             "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
             "status": {"phase": "Running", "podIP": "127.0.0.1"}}
    kubelet, kubelet_h = _serve({"/pods": json.dumps({"kind": "PodList", "apiVersion": "v1",
                                                       "items": [pod, other]}).encode()})
    try:
        bindir = os.path.join(work, "bin")
        os.makedirs(bindir)
        smi = os.path.join(bindir, "nvidia-smi")
        with open(smi, "w", encoding="utf-8") as f:
            # nvidia-smi --query-gpu=...: CSV, one line per GPU ("noheader,nounits": memory.total in MiB)
            f.write("#!/bin/sh\ncase \"$*\" in\n*name,memory.total*) i=0; while [ $i -lt 8 ]; do "
                    "echo 'NVIDIA H100 80GB HBM3, 81559'; i=$((i+1)); done;;\n*index*) seq 0 7;;\n"
                    "*uuid,name*) echo 'GPU-8c1e2f3a-0000-4000-8000-000000000007, NVIDIA H100 80GB HBM3';;\nesac\n")
        os.chmod(smi, 0o755)
        path = os.path.join(work, "node-agent.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)
        env = dict(os.environ, NODE_NAME="gpu-node-07", MEMPLAN_CENTRAL_URL=central.url, MEMPLAN_TOKEN=token,
                   MEMPLAN_BIN=BIN, MEMPLAN_CALIBRATE="false", MEMPLAN_AGENT_PORT=str(free_port()),
                   MEMPLAN_AGENT_DB=os.path.join(work, "agent", "memplan.db"),
                   MEMPLAN_KUBELET_URL="http://127.0.0.1:%d" % kubelet.server_address[1],
                   MEMPLAN_NODE_LEASE="120", MEMPLAN_AGENT_EXIT="1", PATH=bindir + ":/usr/bin:/bin")
        for _ in range(2):  # the second round renews the lease and posts nothing new
            r = subprocess.run(["/bin/sh", path], env=env, capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stdout + r.stderr
        assert kubelet_h.hits.get("/pods") == 2 and pod_h.hits.get("/metrics") == 1
        with urllib.request.urlopen(central.url + "/v1/nodes/gpu-node-07", timeout=10) as resp:
            node = json.loads(resp.read())
        assert (node["product"], node["memory_mib"], node["count"], node["lease_seconds"]) == \
            ("NVIDIA H100 80GB HBM3", 81559, 8, 120)
        with urllib.request.urlopen(central.url + "/v1/observations", timeout=10) as resp:
            obs = json.loads(resp.read())
        assert len(obs["items"]) == 1, obs
        o = obs["items"][0]
        assert (o["pod"], o["namespace"], o["node"], o["key"]) == ("llama8b-0", "inference", "gpu-node-07",
                                                                   "6a1f-0007/vllm/0")
        assert (o["engine"], o["engine_version"], o["device"], o["model"]) == ("vllm", "0.11.0", "h100-sxm5-80gb",
                                                                              "llama-3.1-8b")
        # predicted: memplan's blocks for vLLM 0.11.0 on this H100 (planner/engine.c's 0.11 row); reported: the pod's
        assert (o["figure"], o["reported"], o["predicted"]) == ("num_gpu_blocks", 27781, 28277)
        # kube-scheduler with nodeCacheCapable: true sends the name alone, and the report decides
        args = {"Pod": pod, "Nodes": None, "NodeNames": ["gpu-node-07"]}
        res = post(central.url + "/v1/k8s/filter", args)
        assert res["NodeNames"] == ["gpu-node-07"] and res["Nodes"] is None and res["Error"] == ""
    finally:
        kubelet.shutdown()
        pod_srv.shutdown()
        central.stop()
        shutil.rmtree(work)
