# The exporter's image, from the same package as the plugin (deploy/kubectl-terminating.yaml):
#   docker build -t REGISTRY/kubectl-terminating:v0.1.0 .
# The same image serves in-cluster agents with `mcp` (docs/integrations.md, kagent).
FROM python:3.12-slim
COPY pyproject.toml README.md LICENSE /src/
COPY kubectl_terminating /src/kubectl_terminating
RUN pip install --no-cache-dir /src && rm -rf /src
USER 65534:65534
EXPOSE 9101
ENTRYPOINT ["kubectl-terminating"]
CMD ["serve", "--metrics-bind-address=:9101"]
