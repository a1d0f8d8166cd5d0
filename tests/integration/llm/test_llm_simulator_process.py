"""``simulate-llm`` serves the real wire protocol from its own process and says it is a simulator."""

import socket
import subprocess
import sys
import time

import httpx2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_serves_chat_completions_and_announces_the_simulator():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.llm.simulator.cli", "--port", str(port), "--latency-ms", "0", "--seed", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while True:
            try:
                httpx2.get(base + "/v1/models", timeout=1)
                break
            except httpx2.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "simulator did not start"
                time.sleep(0.05)
        reply = httpx2.post(base + "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert "simulated" in reply.json()["choices"][0]["message"]["content"]
        assert httpx2.get(base + "/stats").json()["requests"] == 1
    finally:
        proc.terminate()
        output = proc.communicate(timeout=10)[0]
    assert "LLM SIMULATOR" in output and "not from a real model" in output
