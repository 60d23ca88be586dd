// A minimal CSI node plugin for the harness's real node (tests only, never the product).
//
// It serves the CSI Identity and Node services on --endpoint (NodePublishVolume mounts a small
// tmpfs on the target path, NodeUnpublishVolume unmounts and removes it) and, in place of the
// node-driver-registrar sidecar, the kubelet's plugin registration service on a socket in
// --registration-dir. On SIGTERM it removes both sockets, as node-driver-registrar does, so the
// kubelet deregisters the driver; on SIGKILL the sockets stay behind, as after a crash.
//
// Built by hack/build-csi-driver.sh from the Go module proxy: the CSI spec and
// k8s.io/kubelet's pluginregistration API at the versions Kubernetes pins.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

const version = "0.1.0"

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedNodeServer
	registration.UnimplementedRegistrationServer
	name, nodeID, endpoint string
}

func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: version}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

func (d *driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.nodeID}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

func (d *driver) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if req.GetVolumeId() == "" || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id and target path are required")
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if mounted(target) {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := syscall.Mount("tmpfs", target, "tmpfs", 0, "size=1m"); err != nil {
		return nil, status.Errorf(codes.Internal, "mount %s: %v", target, err)
	}
	log.Printf("published %s on %s", req.GetVolumeId(), target)
	return &csi.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	if mounted(target) {
		if err := syscall.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.RemoveAll(target); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("unpublished %s from %s", req.GetVolumeId(), target)
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// mounted: target is a mount point (its device differs from its parent's).
func mounted(target string) bool {
	var self, parent syscall.Stat_t
	if syscall.Stat(target, &self) != nil || syscall.Stat(filepath.Dir(target), &parent) != nil {
		return false
	}
	return self.Dev != parent.Dev
}

func (d *driver) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              d.name,
		Endpoint:          d.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (d *driver) NotifyRegistrationStatus(_ context.Context, s *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	log.Printf("registration by the kubelet: registered=%v error=%q", s.PluginRegistered, s.Error)
	return &registration.RegistrationStatusResponse{}, nil
}

func listen(path string) net.Listener {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		log.Fatal(err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		log.Fatal(err)
	}
	return l
}

func main() {
	d := &driver{}
	registrationDir := flag.String("registration-dir", "", "the kubelet's plugins_registry directory")
	flag.StringVar(&d.name, "drivername", "", "the CSI driver's name")
	flag.StringVar(&d.nodeID, "nodeid", "", "the node id NodeGetInfo returns")
	flag.StringVar(&d.endpoint, "endpoint", "", "the CSI unix socket path")
	flag.Parse()
	if d.name == "" || d.nodeID == "" || d.endpoint == "" || *registrationDir == "" {
		log.Fatal("--drivername, --nodeid, --endpoint and --registration-dir are required")
	}
	regSocket := filepath.Join(*registrationDir, d.name+"-reg.sock")

	csiServer := grpc.NewServer()
	csi.RegisterIdentityServer(csiServer, d)
	csi.RegisterNodeServer(csiServer, d)
	go func() { log.Print(csiServer.Serve(listen(d.endpoint))) }()

	regServer := grpc.NewServer()
	registration.RegisterRegistrationServer(regServer, d)
	go func() { log.Print(regServer.Serve(listen(regSocket))) }()
	log.Printf("driver %s serving on %s, registration on %s", d.name, d.endpoint, regSocket)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	regServer.Stop()
	csiServer.Stop()
	_ = os.Remove(regSocket)
	_ = os.Remove(d.endpoint)
	log.Print("stopped; sockets removed")
}
