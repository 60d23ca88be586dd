"""The Krew manifest tells users what the plugin does to their cluster."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubectl_terminating.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def description(path: Path) -> str:
    text = "".join(line for line in path.read_text().splitlines(keepends=True) if line[:1] != "#")
    # The template's {{ ... }} lines are not YAML; the description comes before them.
    head = text.split("  platforms:")[0].replace("{{ .TagName }}", "v0")
    return str(yaml.safe_load(head)["spec"]["description"])


def test_the_committed_manifest_says_what_the_template_says() -> None:
    assert description(ROOT / "plugin.yaml") == description(ROOT / "krew" / "template.yaml")


def test_every_command_that_can_write_is_named_with_its_guard() -> None:
    text = description(ROOT / "krew" / "template.yaml")
    writers = [
        name
        for name, command in cli.commands.items()
        if any(param.name == "apply" for param in command.params)
    ]
    assert writers  # `fix --apply`
    for name in writers:
        assert f"`{name}`" in text and "`--apply`" in text
