from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies: list[tuple[str, str]] = []
    operations = [
        migrations.CreateModel(
            name="Effect",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("business_key", models.CharField(db_index=True, max_length=200)),
                ("event_id", models.CharField(max_length=200)),
                ("amount", models.BigIntegerField(null=True)),
                ("applied_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
    ]
