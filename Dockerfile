# One image for the web (uvicorn) and worker (celery) services of docker-compose.yml.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY scheduler_core ./scheduler_core
COPY dashboard ./dashboard
RUN pip install --no-cache-dir -e .
COPY . .
EXPOSE 8000
CMD ["python", "-m", "dashboard.serve", "-b", "0.0.0.0", "-p", "8000", "dashboard.asgi:application"]
