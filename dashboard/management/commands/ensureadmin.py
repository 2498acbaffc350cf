"""manage.py ensureadmin: the role groups; on first run in a terminal, an admin with a random password, printed to
that terminal only, to be changed at the first sign-in."""
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from dashboard.access import EDITOR_GROUP, VIEWER_GROUP
from dashboard.signin import remember_generated


class Command(BaseCommand):
    help = ("Create the viewer and editor groups and, if there is no superuser yet and the output is a terminal, "
            "an admin (password printed once, to be changed at the first sign-in).")

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, **opts):
        for name in (VIEWER_GROUP, EDITOR_GROUP):
            Group.objects.get_or_create(name=name)
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("an admin exists (its password was printed when it was created; "
                              "`manage.py changepassword NAME` sets a new one)")
            return
        if not self.stdout.isatty():  # a log (docker compose, a service manager) would keep the password
            self.stdout.write("no admin yet: run `manage.py ensureadmin` in a terminal to create one "
                              "(its password is printed only to a terminal)")
            return
        password = secrets.token_urlsafe(12)
        remember_generated(users.objects.create_superuser(opts["username"], "", password))
        self.stdout.write(f"created admin user {opts['username']!r} with password {password}\n"
                          "  (shown only this once, to be changed at the first sign-in)")
