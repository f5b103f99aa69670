# On a Windows PC, protocol B the way seed B's Windows section runs it, step by step, each
# step checked; everything it writes goes under OUT_DIR, bundled as OUT_DIR.zip to send back.
# Steps: 1. the tools (Windows build, Python, ONNX Runtime and the EP devices it offers);
# 2. HWiNFO's sensor log: you start HWiNFO64, Sensors, "Log to file" (1 s interval) to
# HWINFO_LOG before running this; the script checks it grows; 3. `runner residency` with
# examples/residency-windows.toml switched to HWiNFO (selection policies and explicit
# providers compiled ahead of time, the assigned device recorded, HWiNFO per trial, the OS's
# power source at every trial, B9 power-state evidence); 4. `audit check`; 5. the bundle.
# Run it plugged in, then once more unplugged (the battery ladder and B9's battery check).
# Usage: powershell -ExecutionPolicy Bypass -File examples\windows-check.ps1 `
#          -HwinfoLog C:\Users\me\hwinfo.csv [-OutDir runs\windows-check] `
#          [-PluginLibrary "OpenVINOExecutionProvider=C:\path\onnxruntime_providers_openvino_plugin.dll"]
param(
  [Parameter(Mandatory = $true)][string]$HwinfoLog,
  [string]$OutDir = "runs\windows-check",
  [string]$Bin = ".venv\Scripts",
  [string[]]$PluginLibrary = @()
)
$ErrorActionPreference = "Continue"
Set-Location (Join-Path $PSScriptRoot "..")
New-Item -ItemType Directory -Force -Path $OutDir | Out-Null
$status = 0
function Step($what) { "== $what" | Tee-Object -FilePath "$OutDir\steps.txt" -Append }

Step "1. tools"
& cmd /c ver | Tee-Object "$OutDir\tools.txt"
Get-CimInstance Win32_ComputerSystem | Select-Object Manufacturer, Model | Format-List | Out-File -Append "$OutDir\tools.txt"
Get-CimInstance Win32_VideoController | Select-Object Name, DriverVersion | Format-List | Out-File -Append "$OutDir\tools.txt"
Get-CimInstance Win32_Battery | Select-Object BatteryStatus, EstimatedChargeRemaining | Format-List | Out-File -Append "$OutDir\tools.txt"
& "$Bin\python.exe" -c "import onnxruntime as o; print('onnxruntime', o.__version__); [print(d.ep_name, d.ep_vendor, d.device.type, d.device.vendor) for d in o.get_ep_devices()]" 2>&1 |
  Tee-Object -Append "$OutDir\tools.txt"
if ($LASTEXITCODE -ne 0) { $status = 1 }

Step "2. HWiNFO log"
if (-not (Test-Path $HwinfoLog)) { "HWiNFO is not logging to $HwinfoLog: start Sensors, Log to file (1 s)"; exit 1 }
$before = (Get-Item $HwinfoLog).Length; Start-Sleep -Seconds 3; $after = (Get-Item $HwinfoLog).Length
if ($after -le $before) { "the HWiNFO log does not grow: is logging on?"; $status = 1 }
Get-Content $HwinfoLog -TotalCount 1 | Out-File "$OutDir\hwinfo-header.txt"

Step "3. runner residency (Windows ML policies, HWiNFO)"
$cfg = Get-Content examples\residency-windows.toml -Raw
$log = $HwinfoLog -replace '\\', '/'
$cfg = $cfg -replace 'instruments = \["nvml", "rapl"\]', "instruments = [`"hwinfo`"]`nhwinfo_log = `"$log`""
$cfg = $cfg -replace 'sampling_interval_s = 0.05', 'sampling_interval_s = 1.0'
$cfg = $cfg -replace 'repetitions = 20', 'repetitions = 40'
if ($PluginLibrary.Count -gt 0) {
  $libs = ($PluginLibrary | ForEach-Object { $n, $p = $_ -split '=', 2; "`"$n`" = `"$($p -replace '\\', '/')`"" }) -join ", "
  $cfg += "`n[windows_ml]`nplugin_libraries = { $libs }`n"
}
$cfg += "`n[power_state]`nidle_unload_s = 60`n"
Set-Content -Path "$OutDir\residency-windows.toml" -Value $cfg -Encoding UTF8
if (Test-Path "$OutDir\residency") { Remove-Item -Recurse -Force "$OutDir\residency" }
& "$Bin\runner.exe" residency --config "$OutDir\residency-windows.toml" --out "$OutDir\residency" 2>&1 |
  Tee-Object "$OutDir\residency.log"
if ($LASTEXITCODE -ne 0) { $status = 1 }

Step "4. audit check"
if (Test-Path "$OutDir\residency\manifest.json") {
  & "$Bin\audit.exe" check "$OutDir\residency" --format text | Tee-Object "$OutDir\audit-check.txt"
  Get-ChildItem "$OutDir\residency\placement\*.winml.json" | ForEach-Object {
    & "$Bin\audit.exe" evidence $_.FullName | Out-File "$($_.FullName).evidence.txt" }
} else { "no run directory: see $OutDir\residency.log"; $status = 1 }

Step "5. bundle"
Compress-Archive -Force -Path $OutDir -DestinationPath "$OutDir.zip"
"send back: $OutDir.zip"
exit $status
