"""Signing in: wrong passwords are throttled per address and per account (django-axes), new passwords pass
Django's validators, and the admin's generated password must be changed at the first sign-in."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from dashboard.models import GeneratedPassword

from .conftest import make_user, page_client

pytestmark = pytest.mark.django_db(transaction=True)


def _sign_in(client, username, password, address="10.0.0.1"):
    return client.post("/profiles/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_forty_wrong_passwords_lock_the_account_and_the_address(settings):
    make_user("alice")
    make_user("bob")
    client = page_client()
    answers = [_sign_in(client, "alice", f"guess-{i}").status_code for i in range(40)]
    assert answers[:settings.AXES_FAILURE_LIMIT - 1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)
    assert set(answers[settings.AXES_FAILURE_LIMIT:]) == {429}
    locked = _sign_in(client, "alice", "alice-pw")
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    assert "Too many wrong passwords for alice" in locked.content.decode()
    # the account is locked from any address ...
    elsewhere = page_client()
    assert _sign_in(elsewhere, "alice", "alice-pw", address="10.0.0.2").status_code == 429
    # ... and the address for any account
    assert _sign_in(page_client(), "bob", "bob-pw").status_code == 429
    # another account from another address still signs in
    other = page_client()
    assert _sign_in(other, "bob", "bob-pw", address="10.0.0.3").status_code == 302
    assert other.get("/profiles/").status_code == 200


def test_a_success_resets_the_count():
    make_user("carol")
    client = page_client()
    for i in range(7):
        assert _sign_in(client, "carol", f"guess-{i}").status_code == 200
    assert _sign_in(client, "carol", "carol-pw").status_code == 302
    for i in range(7):
        assert _sign_in(page_client(), "carol", f"again-{i}", address="10.0.0.9").status_code == 200
    assert _sign_in(page_client(), "carol", "carol-pw", address="10.0.0.9").status_code == 302


def test_weak_passwords_are_refused(admin_user):
    from django.contrib.auth.models import User
    admin = page_client(admin_user)
    resp = admin.post("/admin/auth/user/add/", {"username": "weak", "password1": "a", "password2": "a",
                                                "usable_password": "true"})
    assert resp.status_code == 200 and "This password is too short" in resp.content.decode()
    assert not User.objects.filter(username="weak").exists()
    ok = admin.post("/admin/auth/user/add/", {"username": "strong", "password1": "violet-harbour-71",
                                              "password2": "violet-harbour-71", "usable_password": "true"})
    assert ok.status_code == 302 and User.objects.get(username="strong").check_password("violet-harbour-71")
    # a user changing their own password
    user = make_user("dave")
    own = page_client(user)
    resp = own.post("/profiles/password/", {"old_password": "dave-pw", "new_password1": "12345678901",
                                            "new_password2": "12345678901"})
    assert resp.status_code == 200 and "entirely numeric" in resp.content.decode()


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_ensureadmin_prints_the_password_only_to_a_terminal():
    from django.contrib.auth.models import User
    log = io.StringIO()
    call_command("ensureadmin", username="root", stdout=log)
    assert not User.objects.filter(username="root").exists()
    assert "run `manage.py ensureadmin` in a terminal" in log.getvalue()
    terminal = Terminal()
    call_command("ensureadmin", username="root", stdout=terminal)
    password = terminal.getvalue().split("password ")[1].split()[0]
    assert len(password) >= 16 and User.objects.get(username="root").check_password(password)
    again = Terminal()
    call_command("ensureadmin", username="root", stdout=again)
    assert password not in again.getvalue()


def test_the_generated_password_must_be_changed_at_first_sign_in():
    from django.contrib.auth.models import User
    terminal = Terminal()
    call_command("ensureadmin", username="root", stdout=terminal)
    password = terminal.getvalue().split("password ")[1].split()[0]
    client = page_client()
    assert _sign_in(client, "root", password).status_code == 302
    for url in ("/", "/profiles/", "/admin/"):
        resp = client.get(url)
        assert resp.status_code == 302 and resp["Location"] == "/profiles/password/", url
    form = client.get("/profiles/password/")
    assert form.status_code == 200 and 'id="password-change-required"' in form.content.decode()
    same = client.post("/profiles/password/", {"old_password": password, "new_password1": password,
                                               "new_password2": password})
    assert same.status_code == 200 and "other than the current one" in same.content.decode()
    assert client.post("/profiles/password/", {"old_password": password, "new_password1": "amber-lantern-58",
                                               "new_password2": "amber-lantern-58"}).status_code == 302
    assert client.get("/profiles/").status_code == 200
    assert not GeneratedPassword.objects.exists()
    assert User.objects.get(username="root").check_password("amber-lantern-58")
    # signing in again is not sent to the change
    again = page_client()
    assert _sign_in(again, "root", "amber-lantern-58", address="10.0.0.5").status_code == 302
    assert again.get("/profiles/").status_code == 200


def test_a_password_changed_from_the_command_line_is_not_asked_again():
    terminal = Terminal()
    call_command("ensureadmin", username="root", stdout=terminal)
    from django.contrib.auth.models import User
    root = User.objects.get(username="root")
    root.set_password("copper-meadow-34")
    root.save()
    client = page_client()
    assert _sign_in(client, "root", "copper-meadow-34").status_code == 302
    assert client.get("/profiles/").status_code == 200
