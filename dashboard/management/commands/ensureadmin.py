"""manage.py ensureadmin: on first run, an admin with a random password, printed once; the role groups."""
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from dashboard.access import EDITOR_GROUP, VIEWER_GROUP


class Command(BaseCommand):
    help = "Create the viewer and editor groups and, if there is no superuser yet, an admin (password printed once)."

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
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(opts["username"], "", password)
        self.stdout.write(f"created admin user {opts['username']!r} with password {password}\n"
                          "  (shown only this once: note it, or set another with `manage.py changepassword`)")
