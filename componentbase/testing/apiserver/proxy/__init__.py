"""The node proxy: pods/log, exec, attach, portforward and nodes/proxy forwarded to a kubelet, with the
server's kubelet client certificate.
"""
