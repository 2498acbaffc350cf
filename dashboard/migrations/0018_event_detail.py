"""Events: a detail that only editors of the cluster and admins read in place of the message."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0017_store_bytes'),
    ]

    operations = [
        migrations.AddField(
            model_name='schedulingevent',
            name='detail',
            field=models.TextField(blank=True, db_default='', default='', help_text="what editors of the cluster and admins read in place of the message (a remote API server's own error text, what is wrong with a kubeconfig file); blank: the message is all there is"),
        ),
    ]
