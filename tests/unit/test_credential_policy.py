"""The kuberc's credential-plugin policy read and applied as kubectl 1.36.3 does (the rules and
where they come from: kubectl_terminating/credential_policy.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kubectl_terminating.credential_policy import Policy, allowed, check, kuberc_path, load
from kubectl_terminating.errors import ConfigError

HEAD = "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plugin(directory: Path, name: str = "get-token") -> Path:
    path = write(directory / name, "#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def loaded(text: str, tmp_path: Path, explicit: bool = True) -> tuple[Policy, list[str]]:
    """The policy of a kuberc holding text (named by KUBERC, or at HOME's default), and the
    warnings said."""
    said: list[str] = []
    if explicit:
        env = {"KUBERC": str(write(tmp_path / "rc.yaml", text)), "HOME": str(tmp_path)}
    else:
        write(tmp_path / ".kube" / "kuberc", text)
        env = {"HOME": str(tmp_path)}
    return load(env, said.append), said


def test_which_kuberc() -> None:
    home = {"HOME": "/home/u"}
    assert kuberc_path(home) == (Path("/home/u/.kube/kuberc"), False)
    assert kuberc_path({**home, "KUBERC": "/etc/rc"}) == (Path("/etc/rc"), True)
    assert kuberc_path({**home, "KUBERC": ""}) == (Path("/home/u/.kube/kuberc"), False)
    assert kuberc_path({**home, "KUBERC": "off"}) == (None, False)
    assert kuberc_path({**home, "KUBERC": "/etc/rc", "KUBECTL_KUBERC": "False"}) == (None, False)


def test_no_kuberc_allows_all(tmp_path: Path) -> None:
    said: list[str] = []
    assert load({"HOME": str(tmp_path)}, said.append) == Policy()
    assert said == []
    with pytest.raises(ConfigError, match=r"kuberc .*nope: No such file or directory"):
        load({"KUBERC": str(tmp_path / "nope")})
    # a default kuberc that cannot be read: kubectl's warning, and no preferences
    (tmp_path / ".kube" / "kuberc").mkdir(parents=True)
    assert load({"HOME": str(tmp_path)}, said.append) == Policy()
    assert said == [
        f"kuberc {tmp_path / '.kube' / 'kuberc'}: Is a directory; no preferences loaded"
    ]


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        (HEAD, Policy()),
        (HEAD + "credentialPluginPolicy: AllowAll\n", Policy("AllowAll")),
        (HEAD + "credentialPluginPolicy: DenyAll\n", Policy("DenyAll")),
        (HEAD + "credentialPluginPolicy: null\n", Policy("AllowAll")),
        (
            HEAD + "credentialPluginPolicy: Allowlist\n"
            "credentialPluginAllowlist:\n- command: get-token\n- name: /usr/bin/legacy\n"
            "- {name: same, command: same}\n",
            Policy("Allowlist", ("get-token", "/usr/bin/legacy", "same")),
        ),
        # another document first (kubectl takes the first Preference)
        (
            "apiVersion: v1\nkind: Config\n---\n" + HEAD + "credentialPluginPolicy: DenyAll\n",
            Policy("DenyAll"),
        ),
    ],
)
def test_policies(text: str, policy: Policy, tmp_path: Path) -> None:
    found, said = loaded(text, tmp_path)
    assert (found.kind, found.allowlist) == (policy.kind, policy.allowlist)
    assert said == []


def test_unknown_fields_are_a_warning(tmp_path: Path) -> None:
    # a misspelt field is dropped (kubectl's strict decoding error, only warned about)
    found, said = loaded(HEAD + "credentialPluginPolicies: DenyAll\n", tmp_path)
    assert found.kind == "AllowAll"
    assert said == [
        f"kuberc {tmp_path / 'rc.yaml'}: ignoring unknown field(s) " "credentialPluginPolicies"
    ]
    # v1alpha1 has no policy fields
    text = HEAD.replace("v1beta1", "v1alpha1") + "credentialPluginPolicy: DenyAll\n"
    found, said = loaded(text, tmp_path)
    assert found.kind == "AllowAll" and "credentialPluginPolicy" in said[0]


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "credentialPluginPolicy: [DenyAll]\n",  # not a string: it does not decode
        "not: [valid\n",
        "- a list\n",
        "apiVersion: kubectl.config.k8s.io/v2\nkind: Preference\n",
        HEAD + "credentialPluginPolicy: Allowlist\n"
        "credentialPluginAllowlist:\n- {name: a, command: b}\n",  # conversion error
    ],
)
def test_undecodable_kuberc(text: str, tmp_path: Path) -> None:
    """Named by KUBERC: the error; at the default path: a warning and no preferences."""
    with pytest.raises(ConfigError, match="no valid Preference of kubectl.config.k8s.io"):
        loaded(text, tmp_path)
    found, said = loaded(text, tmp_path, explicit=False)
    assert found == Policy()
    assert len(said) == 1 and said[0].endswith("no preferences loaded")


@pytest.mark.parametrize(
    ("rest", "error"),
    [
        ("credentialPluginPolicy: denyall\n", 'unknown policy "denyall"'),
        (
            "credentialPluginPolicy: DenyAll\ncredentialPluginAllowlist: []\n",
            'credentialPluginAllowlist is set but the policy is "DenyAll"',
        ),
        ("credentialPluginAllowlist:\n- command: x\n", 'the policy is "", not "Allowlist"'),
        ("credentialPluginPolicy: Allowlist\n", "credentialPluginAllowlist is unspecified"),
        (
            "credentialPluginPolicy: Allowlist\ncredentialPluginAllowList: [{command: x}]\n",
            "credentialPluginAllowlist is unspecified",
        ),
        (
            "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: []\n",
            'the allowlist is empty; use "DenyAll"',
        ),
        (
            "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{}]\n",
            "allowlist entry #1 is empty",
        ),
        (
            "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: [{command: /bin//x}]\n",
            'allowlist entry "/bin//x" is not a clean path ("/bin/x")',
        ),
    ],
)
def test_invalid_policy_is_an_error_wherever_the_kuberc_is(
    rest: str, error: str, tmp_path: Path
) -> None:
    for explicit in (True, False):
        with pytest.raises(ConfigError, match="credential plugin policy") as raised:
            loaded(HEAD + rest, tmp_path / str(explicit), explicit)
        assert error in raised.value.message


def test_deny_all_refuses_every_plugin(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    path = plugin(tmp_path)
    policy = Policy("DenyAll", (), "/home/u/.kube/kuberc")
    for command in (str(path), "get-token"):
        with pytest.raises(ConfigError) as refused:
            check(command, "prod", env, policy)
        assert refused.value.message == (
            f'context "prod": exec credential plugin "{command}" not allowed: '
            'policy set to "DenyAll" (kuberc /home/u/.kube/kuberc)'
        )
    assert check("anything", "prod", env, Policy()) == "anything"


def test_allowlist_by_full_path(tmp_path: Path) -> None:
    bin_dir, other = tmp_path / "bin", tmp_path / "other"
    path = plugin(bin_dir)
    plugin(other)
    policy = Policy("Allowlist", (str(path),))
    env = {"PATH": f"{other}:{bin_dir}"}
    assert allowed(policy, str(path), env) == (str(path), None)
    assert allowed(policy, str(bin_dir / "." / "get-token"), env) == (str(path), None)  # cleaned
    # a bare command is allowed when PATH finds that very file; what runs is that path
    assert allowed(policy, "get-token", {"PATH": f"{bin_dir}:{other}"}) == (str(path), None)
    # ... and refused when PATH finds another file of that name first
    run, why = allowed(policy, "get-token", env)
    assert why is not None and f"{other / 'get-token'} is not in its" in why


def test_allowlist_by_basename_is_the_file_path_finds(tmp_path: Path) -> None:
    bin_dir, elsewhere = tmp_path / "bin", tmp_path / "elsewhere"
    path, stranger = plugin(bin_dir), plugin(elsewhere)
    policy = Policy("Allowlist", ("get-token",))
    env = {"PATH": str(bin_dir)}
    assert allowed(policy, "get-token", env) == (str(path), None)
    assert allowed(policy, str(path), env) == (str(path), None)
    # the same name elsewhere is another program: refused
    run, why = allowed(policy, str(stranger), env)
    assert why is not None and "is not in its credentialPluginAllowlist" in why
    # a basename entry PATH cannot find allows nothing
    assert allowed(policy, str(path), {"PATH": str(elsewhere / "none")})[1] is not None


def test_allowlist_refuses_what_cannot_be_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = write(tmp_path / "bin" / "not-executable", "#!/bin/sh\n")
    policy = Policy("Allowlist", (str(plain), "missing"))
    env = {"PATH": str(tmp_path / "bin")}
    for command, reason in (
        (str(plain), "permission denied"),
        ("missing", "executable file not found in $PATH"),
        (str(tmp_path / "bin"), "is a directory"),
    ):
        assert allowed(policy, command, env)[1] == (
            f'policy set to "Allowlist" and its path cannot be resolved: {reason}'
        )
    # Go refuses a program PATH finds through a relative entry (ErrDot)
    plugin(tmp_path / "bin", "relative")
    monkeypatch.chdir(tmp_path)
    assert "current directory" in str(
        allowed(Policy("Allowlist", ("relative",)), "relative", {"PATH": "bin"})[1]
    )


def test_check_reads_the_users_kuberc(tmp_path: Path) -> None:
    path = plugin(tmp_path / "bin")
    rc = write(
        tmp_path / "rc",
        HEAD + f"credentialPluginPolicy: Allowlist\n"
        f"credentialPluginAllowlist:\n- command: {path}\n",
    )
    env = {"KUBERC": str(rc), "PATH": ""}
    assert check(str(path), "dev", env) == str(path)
    with pytest.raises(ConfigError, match=rf'context "dev": .* \(kuberc {rc}\) and /bin/sh is'):
        check("/bin/sh", "dev", env)
    assert check("/bin/sh", "dev", {**env, "KUBERC": "off"}) == "/bin/sh"
