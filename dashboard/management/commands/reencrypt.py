"""manage.py reencrypt: after putting a new key first in SCHEDSCOPE_ENCRYPTION_KEYS, re-encrypt stored secrets."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.services import credentials


class Command(BaseCommand):
    help = ("Re-encrypt every stored kubeconfig with the first key of SCHEDSCOPE_ENCRYPTION_KEYS; the older keys "
            "can then be removed from it.")

    def handle(self, *args, **opts):
        try:
            count = credentials.reencrypt_all()
        except credentials.KubeconfigUnreadable as err:
            raise CommandError(str(err)) from None
        self.stdout.write(f"re-encrypted {count} kubeconfig(s)")
