"""Gradio's upload route is limited per submitter, in size, count and bytes, before a byte of the body is stored, and
the counts survive a restart; a graded upload leaves Gradio's upload cache at once."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from conftest import free_port, fresh, post_upload, seeded_run


def test_the_upload_route_is_limited_per_submitter_and_the_count_survives_a_restart(space_service, tmp_path):
    from hypergvl.space.app import launch
    from hypergvl.space.counters import Counters

    svc = fresh(space_service, tmp_path)
    svc.config = replace(svc.config, upload_files=3, upload_bytes=10_000,
                         limits=replace(svc.config.limits, max_bytes=200_000))
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        status, text = post_upload(url, b"x" * 300_000)
        assert status == 413 and "the limit is 200,000" in text  # refused from its declared length
        status, text = post_upload(url, b"{}\n" * 10, chunked=True)
        assert status == 411
        ok = [post_upload(url, b"{}\n" * 100) for _ in range(3)]
        assert [s for s, _ in ok] == [200] * 3, ok
        stored = json.loads(ok[0][1])
        assert Path(stored[0]).is_file()
        status, text = post_upload(url, b"{}\n" * 100)
        assert status == 429 and "at most 3 uploaded files per 1 h" in text
    finally:
        demo.close()
    # a restart keeps the counts: they are in the Space's own counters file, not in memory
    counters = Counters(svc.config.data_dir / "private" / "counters.sqlite", svc.config.rate_window_s)
    assert counters.upload("ip:127.0.0.1", 1, max_count=3, max_bytes=10_000, window_s=3600) is not None
    assert counters.upload("ip:127.0.0.2", 1, max_count=3, max_bytes=10_000, window_s=3600) is None
    # bytes are a limit of their own
    assert "MiB of uploaded files" in counters.upload("ip:127.0.0.2", 20_000, max_count=3, max_bytes=10_000,
                                                      window_s=3600)


def test_a_graded_upload_is_deleted_from_the_upload_cache(space_service, tmp_path):
    from gradio_client import Client, handle_file

    from hypergvl.space.app import launch

    svc = fresh(space_service, tmp_path)
    run = seeded_run(space_service)
    upload = tmp_path / "samples.jsonl"
    upload.write_bytes((run / "samples.jsonl").read_bytes())
    demo, url = launch(svc, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        from gradio.utils import get_upload_folder

        before = {p for p in Path(get_upload_folder()).rglob("*") if p.is_file()}
        result = Client(url, verbose=False).predict(handle_file(str(upload)), "org/up", "", "main", "open", 7,
                                                    "vision", "", svc.sets.current("public").name, api_name="/submit")
        assert result.startswith("Accepted"), result
        after = {p for p in Path(get_upload_folder()).rglob("*") if p.is_file()}
        assert not {p for p in after - before if p.name == "samples.jsonl"}
    finally:
        demo.close()
