"""manage.py apitoken USER: a new REST API token (``Authorization: Token ...``), printed once."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from knox.models import AuthToken


class Command(BaseCommand):
    help = "Create an API token for USER and print it (only its digest is stored: it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **opts):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user named {username!r}")
        _row, token = AuthToken.objects.create(user=user)
        self.stdout.write(token)
